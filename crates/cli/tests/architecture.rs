//! The architecture, held by a test: data flows one way through the
//! workspace (topology -> placement -> pool -> primitives -> operators ->
//! runtimes -> CLI), and within each crate no two modules import each
//! other, directly or round a circle. Test code is left out (a module's
//! tests may use anything); so are comments and doc links.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates from the bottom of the stack up: a crate may depend only on
/// crates listed before it.
const STACK: &[&str] = &[
    "topology",
    "io",
    "placement",
    "sync",
    "pool",
    "shuffle",
    "sim",
    "ops",
    "frame",
    "mapreduce",
    "mapreduce-apps",
    "probe",
    "interfere",
    "cluster",
    "paper",
    "python",
    "cli",
];

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A module path inside its crate (`["commands", "ops", "join"]`).
type Module = Vec<String>;

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Files that hold only tests (`tests.rs`, `test_cases.rs`, `*_tests.rs`).
fn is_test_file(path: &Path) -> bool {
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    name == "tests" || name == "test_cases" || name.ends_with("_tests")
}

fn module_of(src: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut parts: Module = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The production text of a file: up to its first test module, without
/// comments.
fn production_text(text: &str) -> String {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            let next = lines.peek().map(|l| l.trim_start()).unwrap_or("");
            if next.starts_with("mod ") && next.ends_with('{') {
                break;
            }
        }
        let code = line.split("//").next().unwrap_or("");
        kept.push_str(code);
        kept.push('\n');
    }
    kept
}

/// Every path after `crate::` or `super::` in `text`, as segments
/// (`super::` resolved against `module`).
fn references(module: &Module, text: &str) -> Vec<Module> {
    let mut found = Vec::new();
    for (prefix, base) in [
        ("crate::", Vec::new()),
        ("super::", module[..module.len().saturating_sub(1)].to_vec()),
    ] {
        for (i, _) in text.match_indices(prefix) {
            let before = text[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest: String = text[i + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut path = base.clone();
            for segment in rest.split("::") {
                let is_module = segment.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
                if !is_module {
                    break;
                }
                path.push(segment.to_string());
            }
            found.push(path);
        }
    }
    found
}

/// Edges between sibling modules: `a -> b` when code in `a` (or below it)
/// uses `b` (or something below it), `a` and `b` having the same parent.
fn sibling_edges(src: &Path) -> BTreeSet<(Module, Module)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeMap<Module, PathBuf> = files
        .into_iter()
        .filter(|f| !is_test_file(f))
        .map(|f| (module_of(src, &f), f))
        .collect();
    let mut edges = BTreeSet::new();
    for (module, file) in &modules {
        let text = production_text(&std::fs::read_to_string(file).expect("readable source"));
        for reference in references(module, &text) {
            let Some(target) = (1..=reference.len())
                .rev()
                .map(|k| reference[..k].to_vec())
                .find(|prefix| modules.contains_key(prefix))
            else {
                continue;
            };
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            if common < module.len() && common < target.len() {
                edges.insert((module[..=common].to_vec(), target[..=common].to_vec()));
            }
        }
    }
    edges
}

/// Modules that lie on a circle of edges, one circle each.
fn circles(edges: &BTreeSet<(Module, Module)>) -> Vec<Vec<Module>> {
    let mut next: BTreeMap<&Module, Vec<&Module>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    let reaches = |from: &Module, to: &Module| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(m) = stack.pop() {
            if m == to {
                return true;
            }
            if seen.insert(m) {
                stack.extend(next.get(m).into_iter().flatten().copied());
            }
        }
        false
    };
    let mut found: Vec<Vec<Module>> = Vec::new();
    for module in next.keys() {
        if found.iter().any(|c| c.contains(module)) {
            continue;
        }
        let circle: Vec<Module> = next
            .keys()
            .filter(|other| reaches(module, other) && reaches(other, module))
            .map(|m| (*m).clone())
            .collect();
        if circle.len() > 1 {
            found.push(circle);
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let mut report = Vec::new();
    for name in STACK {
        let src = crates_dir().join(name).join("src");
        for circle in circles(&sibling_edges(&src)) {
            let names: Vec<String> = circle.iter().map(|m| m.join("::")).collect();
            report.push(format!("{name}: {} import each other", names.join(" and ")));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let mut report = Vec::new();
    for (level, name) in STACK.iter().enumerate() {
        let manifest = std::fs::read_to_string(crates_dir().join(name).join("Cargo.toml"))
            .expect("a manifest");
        let mut section = "";
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                section = line;
                continue;
            }
            let Some(dependency) = line.strip_prefix("numakit-") else {
                continue;
            };
            if section != "[dependencies]" {
                continue;
            }
            let dependency: String = dependency
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                .collect();
            match STACK.iter().position(|c| *c == dependency) {
                Some(below) if below < level => {}
                Some(_) => report.push(format!("{name} depends on numakit-{dependency}, above it")),
                None => report.push(format!(
                    "{name} depends on numakit-{dependency}, not in the stack"
                )),
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn the_checks_see_a_circle_and_ignore_tests_and_comments() {
    let module = |path: &str| -> Module { path.split("::").map(String::from).collect() };
    let text = "use crate::a::b::Thing; // crate::z\nfn f() { super::c::g() }\n#[cfg(test)]\nmod tests {\n use crate::d;\n}\n";
    let refs = references(&module("x::y"), &production_text(text));
    assert_eq!(refs, [module("a::b"), module("x::c::g")]);
    let edges: BTreeSet<(Module, Module)> = [
        (module("a"), module("b")),
        (module("b"), module("c")),
        (module("c"), module("a")),
        (module("c"), module("d")),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&edges).len(), 1, "one circle, found once");
    let one_way: BTreeSet<(Module, Module)> = [(module("a"), module("b"))].into_iter().collect();
    assert!(circles(&one_way).is_empty());
}
