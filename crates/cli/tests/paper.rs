//! `numakit paper`: the list of every paper's items, one simulated figure
//! rerun as JSON, text and a chart, every item's "by hand" commands
//! parsing with today's options, and bad requests as one line.

mod command;

use clap::Parser;
use command::{assert_error, assert_usage_error, json_of, numakit};
use numakit_cli::args::Cli;
use numakit_paper::{catalog, Paper, Reproduction};

#[test]
fn the_list_covers_the_four_papers_and_says_why_not() {
    let v = json_of(&["paper", "--list", "--json"]);
    let papers = v.as_array().expect("one entry per paper");
    assert_eq!(papers.len(), 4, "{v}");
    for paper in papers {
        let items = paper["items"].as_array().expect("items");
        assert!(!items.is_empty(), "{paper}");
        for item in items {
            assert!(
                item["differs"].as_str().is_some_and(|d| !d.is_empty()),
                "{item}"
            );
        }
    }
    let out = numakit(&["paper", "--list", "kiefer"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("KIEFER: Kiefer"), "{text}");
    assert!(
        text.contains("items rerun by `numakit paper KIEFER`"),
        "{text}"
    );
}

/// Each item's commands, split at `;`: the ones that start with `numakit`.
fn by_hand(commands: &str) -> Vec<Vec<String>> {
    commands
        .split(';')
        .map(|c| c.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|words| words.first().is_some_and(|w| w == "numakit"))
        .collect()
}

#[test]
fn every_item_names_commands_that_parse_today() {
    for paper in Paper::ALL {
        for item in catalog(paper) {
            let commands = by_hand(item.commands);
            let reproducible = item.how != Reproduction::NotReproducible;
            assert_eq!(
                !commands.is_empty(),
                reproducible,
                "{}: {:?}",
                item.name(),
                item.commands
            );
            for words in commands {
                assert!(
                    words.iter().all(|w| !w.contains(['"', '\''])),
                    "{}: keep quotes out of {words:?}",
                    item.name()
                );
                match Cli::try_parse_from(&words) {
                    Ok(_) => {}
                    // `--help` parses: clap answers it with the help text.
                    Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {}
                    Err(e) => panic!("{}: {words:?} does not parse: {e}", item.name()),
                }
            }
        }
    }
}

#[test]
fn a_simulated_figure_reruns_with_its_claim_and_chart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let chart = dir.path().join("fig6.svg");
    let chart_arg = chart.to_str().expect("utf-8 path");
    let v = json_of(&[
        "paper", "li", "--figure", "6", "--small", "--json", "--chart", chart_arg,
    ]);
    let report = &v[0];
    assert_eq!(report["paper"], "LI", "{v}");
    assert_eq!(report["id"]["Figure"], 6, "{v}");
    let rows = report["rows"].as_array().expect("rows");
    assert!(
        rows.iter()
            .any(|r| r["ours"].is_number() && r["published"].is_number()),
        "{v}"
    );
    let shapes = report["shapes"].as_array().expect("shapes");
    assert!(!shapes.is_empty(), "{v}");
    assert!(shapes.iter().all(|s| s["verdict"] != "fails"), "{v}");
    let svg = std::fs::read_to_string(&chart).expect("the chart was written");
    assert!(svg.starts_with("<svg") && svg.contains("(paper)"), "{svg}");

    let out = numakit(&["paper", "LI", "--figure", "6", "--small"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "LI Figure 6",
        "ours/paper",
        "claim:",
        "differs:",
        "by hand: numakit",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
}

#[test]
fn bad_requests_are_one_line() {
    assert_error(&["paper", "knuth"], "unknown paper");
    assert_error(&["paper", "li", "--figure", "99"], "has no Figure 99");
    assert_error(
        &["paper", "li", "--table", "XLII"],
        "is not a figure or table number",
    );
    assert_usage_error(&["paper"], "PAPER");
    assert_usage_error(
        &["paper", "li", "--figure", "6", "--table", "1"],
        "cannot be used with",
    );
    let diagram = catalog(Paper::Chakraborty)
        .into_iter()
        .find(|i| i.how == Reproduction::NotReproducible)
        .expect("Chakraborty's architecture diagrams are listed as not reproducible");
    let number = match diagram.id {
        numakit_paper::ItemId::Figure(n) | numakit_paper::ItemId::Table(n) => n.to_string(),
    };
    let kind = match diagram.id {
        numakit_paper::ItemId::Figure(_) => "--figure",
        numakit_paper::ItemId::Table(_) => "--table",
    };
    assert_error(
        &["paper", "chakraborty", kind, &number],
        "cannot be reproduced",
    );
}
