//! The README, checked as a newcomer would use it: every `numakit` command
//! it shows (in `sh` blocks and in inline code) parses with today's
//! options, the quick ones run (the described-machine JSON example
//! included), and its sample of the main job's output has the lines that
//! `numakit run` prints today (`scripts/readme-sample` regenerates it).

mod command;

use std::collections::BTreeSet;
use std::path::Path;

use clap::Parser;
use command::numakit_in;
use numakit_cli::args::Cli;

fn readme() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    std::fs::read_to_string(&path).expect("README.md")
}

/// Words of one shell command: whitespace-separated, with '...' and "..."
/// quoting, up to an unquoted redirection or pipe (enough for the README;
/// no escapes or expansions).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '>' | '<' | '|' | ';') => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// `line` up to an unquoted `#` (a comment).
fn without_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The fenced blocks of `kind` (`sh`, `json`), each as its text.
fn blocks(text: &str, kind: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match &mut current {
            None if line.trim_start() == format!("```{kind}") => current = Some(String::new()),
            Some(block) if line.trim_start().starts_with("```") => {
                found.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    found
}

/// Every `numakit ...` command of the README's `sh` blocks (continuations
/// joined, comments dropped, `a && b` split) and of its inline code.
fn commands(text: &str) -> Vec<Vec<String>> {
    let mut lines = Vec::new();
    for block in blocks(text, "sh") {
        let joined = block.replace("\\\n", " ");
        for line in joined.lines() {
            for part in without_comment(line).split("&&") {
                lines.push(part.trim().to_string());
            }
        }
    }
    for span in text.split('`').skip(1).step_by(2) {
        let placeholder = ["<", "...", "…", "|", "ARGS"]
            .iter()
            .any(|p| span.contains(p));
        if !placeholder {
            lines.push(span.trim().to_string());
        }
    }
    lines
        .iter()
        .filter(|line| line.starts_with("numakit "))
        .map(|line| shell_words(line))
        .filter(|words| !words.iter().any(|w| is_placeholder(w)))
        .collect()
}

/// A word that stands for a value the reader chooses (`T`, `FILE`).
fn is_placeholder(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_uppercase())
}

#[test]
fn every_command_in_the_readme_parses() {
    let text = readme();
    let commands = commands(&text);
    assert!(
        commands.len() > 40,
        "found only {} commands",
        commands.len()
    );
    let mut refused = Vec::new();
    for words in &commands {
        if let Err(e) = Cli::try_parse_from(words) {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                refused.push(format!("{}: {}", words.join(" "), e.kind()));
            }
        }
    }
    assert!(
        refused.is_empty(),
        "README commands that do not parse:\n{}",
        refused.join("\n")
    );
}

/// Commands quick enough to run in a test (seconds in a debug build).
fn is_quick(words: &[String]) -> bool {
    let has = |w: &str| words.iter().any(|x| x == w);
    match words.get(1).map(String::as_str) {
        Some("topo" | "doctor" | "simulate") => true,
        Some("shuffle") => has("--plan"),
        _ => false,
    }
}

#[test]
fn the_quick_readme_commands_run() {
    let text = readme();
    let dir = tempfile::tempdir().expect("temp dir");
    let json = blocks(&text, "json");
    let example = json.first().expect("the described-machine JSON example");
    std::fs::write(dir.path().join("my-box.json"), example).expect("my-box.json");
    let quick: Vec<_> = commands(&text)
        .into_iter()
        .filter(|w| is_quick(w))
        .collect();
    assert!(
        quick.len() >= 8,
        "found only {} quick commands",
        quick.len()
    );
    for words in quick {
        let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
        let out = numakit_in(dir.path(), &args);
        assert!(
            out.status.success(),
            "`{}` failed: {}",
            words.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !out.stdout.is_empty(),
            "`{}` printed nothing",
            words.join(" ")
        );
    }
}

/// The README's sample of `numakit run`: the text between its markers.
fn sample(text: &str) -> String {
    let start = text
        .find("<!-- sample: numakit run")
        .expect("the sample's start marker");
    let end = text
        .find("<!-- /sample -->")
        .expect("the sample's end marker");
    let block = &text[start..end];
    let open = block.find("```\n").expect("the sample's code block") + 4;
    let close = block[open..]
        .find("```")
        .expect("the sample's closing fence")
        + open;
    block[open..close].to_string()
}

/// What a line of the main job says, without its figures: its first two
/// words, digits masked (`fill 0.057 s` and `fill 0.1 s` are one line).
fn line_heads(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let words: Vec<String> = l
                .split_whitespace()
                .take(2)
                .map(|w| {
                    let mut masked = String::new();
                    for c in w.chars() {
                        let c = if c.is_ascii_digit() { '#' } else { c };
                        if !(c == '#' && masked.ends_with('#')) {
                            masked.push(c);
                        }
                    }
                    masked
                })
                .collect();
            words.join(" ")
        })
        .collect()
}

#[test]
fn the_readme_sample_of_the_main_job_is_current() {
    let text = readme();
    let readme_heads = line_heads(&sample(&text));
    let dir = tempfile::tempdir().expect("temp dir");
    let out = numakit_in(dir.path(), &["run", "--size-mib", "16"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fresh_heads = line_heads(&String::from_utf8_lossy(&out.stdout));
    let missing: Vec<_> = readme_heads.difference(&fresh_heads).collect();
    let new: Vec<_> = fresh_heads.difference(&readme_heads).collect();
    assert!(
        missing.is_empty() && new.is_empty(),
        "the README's sample of `numakit run` is out of date (run scripts/readme-sample):\n\
         in the README only: {missing:?}\nin today's output only: {new:?}"
    );
}

#[test]
fn the_extraction_sees_quotes_comments_and_continuations() {
    assert_eq!(
        shell_words("numakit join --left 'r-{p}.parquet' --key \"a b\""),
        ["numakit", "join", "--left", "r-{p}.parquet", "--key", "a b"]
    );
    assert_eq!(
        without_comment("numakit topo   # nodes, 'CPUs'"),
        "numakit topo   "
    );
    assert_eq!(
        without_comment("numakit x --sep '#'"),
        "numakit x --sep '#'"
    );
    assert_eq!(shell_words("numakit topo > /dev/full"), ["numakit", "topo"]);
    assert!(commands("see `numakit probe --threads-per-node T`").is_empty());
    let text =
        "```sh\nnumakit a \\\n  --b 1  # c\nnumakit d && numakit e\n```\nsee `numakit f --g`";
    let found = commands(text);
    assert_eq!(
        found,
        [
            vec!["numakit", "a", "--b", "1"],
            vec!["numakit", "d"],
            vec!["numakit", "e"],
            vec!["numakit", "f", "--g"]
        ]
    );
}
