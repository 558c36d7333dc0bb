//! The README's per-paper sections list exactly the items `numakit paper
//! --list` offers: every figure and table of each paper, once.

use std::collections::BTreeSet;

use numakit_paper::{catalog, ItemId, Paper};

fn readme() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    std::fs::read_to_string(path).expect("the workspace README")
}

/// The section of the README that covers the papers, from its heading to
/// the next heading of the same level.
fn papers_section(readme: &str) -> &str {
    let start = readme
        .find("\n## The papers, rerun")
        .expect("a README section '## The papers, rerun'");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

/// The items one paper's subsection lists in its table's first column.
fn listed(section: &str, paper: Paper) -> BTreeSet<ItemId> {
    let name = match paper {
        Paper::Li => "Li",
        Paper::Kiefer => "Kiefer",
        Paper::Chakraborty => "Chakraborty",
        Paper::Phoenix => "Phoenix",
    };
    let start = section
        .find(&format!("\n### {name}"))
        .unwrap_or_else(|| panic!("a subsection '### {name} ...'"));
    let rest = &section[start + 1..];
    let end = rest[4..].find("\n### ").map_or(rest.len(), |e| e + 4);
    rest[..end]
        .lines()
        .filter_map(|line| {
            let first = line.strip_prefix('|')?.split('|').next()?.trim();
            let (kind, number) = first.split_once(' ')?;
            let n: u32 = number.parse().ok()?;
            match kind {
                "Figure" => Some(ItemId::Figure(n)),
                "Table" => Some(ItemId::Table(n)),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn the_readme_lists_every_item_of_every_paper() {
    let readme = readme();
    let section = papers_section(&readme);
    for paper in Paper::ALL {
        let offered: BTreeSet<ItemId> = catalog(paper).iter().map(|i| i.id).collect();
        assert!(!offered.is_empty(), "{paper} offers no items");
        let listed = listed(section, paper);
        let missing: Vec<_> = offered.difference(&listed).collect();
        let extra: Vec<_> = listed.difference(&offered).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{paper}: the README misses {missing:?} and lists {extra:?} that `numakit paper --list` does not offer"
        );
    }
}
