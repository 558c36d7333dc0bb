//! `numakit mapreduce`: every application on generated input, verified
//! against its sequential reference, through files in the Phoenix++
//! formats, and with clear errors for bad input.

use serde_json::Value;

mod command;
use command::outcome as numakit;

fn json(args: &[&str]) -> Value {
    let (ok, stdout, stderr) = numakit(args);
    assert!(ok, "numakit {args:?} failed: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

const TEXT_APPS: [&str; 4] = [
    "word-count",
    "histogram",
    "linear-regression",
    "string-match",
];

#[test]
fn every_text_app_is_verified_on_generated_input() {
    for app in TEXT_APPS {
        let r = json(&[
            "mapreduce",
            app,
            "--size-mib",
            "1",
            "--verify",
            "--reps",
            "2",
            "--json",
            "--quiet",
        ]);
        assert_eq!(r["verified"], Value::Bool(true), "{app}: {r}");
        assert_eq!(r["times"].as_array().map(Vec::len), Some(2), "{app}");
        let tasks: u64 = r["map_tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["local"].as_u64().unwrap() + n["stolen"].as_u64().unwrap())
            .sum();
        assert!(tasks > 0, "{app}: map tasks counted: {r}");
        // Phoenix's Figure 10: where each phase's worker time went.
        let cpu = &r["cpu"];
        let total: f64 = ["split", "map", "reduce", "merge"]
            .iter()
            .flat_map(|p| ["user", "system", "idle"].map(|k| cpu[p][k].as_f64().unwrap()))
            .sum();
        let map = &cpu["map"];
        assert!(
            map["user"].as_f64().unwrap() + map["system"].as_f64().unwrap() > 0.0,
            "{app}: the map phase used CPU time: {cpu}"
        );
        assert!(total > 0.0, "{app}: {cpu}");
    }
}

#[test]
fn generated_files_read_back_in_both_modes() {
    let dir = tempfile::tempdir().unwrap();
    for app in TEXT_APPS {
        let path = dir.path().join(format!("{app}.in"));
        let p = path.to_str().unwrap();
        let (ok, _, err) = numakit(&[
            "mapreduce",
            app,
            "--size-mib",
            "1",
            "--seed",
            "3",
            "--generate",
            p,
        ]);
        assert!(ok, "{err}");
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            if app == "histogram" {
                1_044_534
            } else {
                1 << 20
            },
            "{app}"
        );
        let generated = json(&[
            "mapreduce",
            app,
            "--size-mib",
            "1",
            "--seed",
            "3",
            "--json",
            "--quiet",
        ]);
        for mode in ["read", "mmap"] {
            let r = json(&[
                "mapreduce",
                app,
                "--input",
                p,
                "--input-mode",
                mode,
                "--verify",
                "--json",
                "--quiet",
            ]);
            assert_eq!(r["verified"], Value::Bool(true), "{app} {mode}");
            assert_eq!(
                r["summary"], generated["summary"],
                "{app} {mode}: the file holds the generated input"
            );
        }
    }
}

#[test]
fn numeric_apps_are_verified_and_read_their_files() {
    let dir = tempfile::tempdir().unwrap();
    for (app, size) in [
        ("kmeans", vec!["--points", "3000", "--clusters", "7"]),
        ("pca", vec!["--rows", "40", "--cols", "30"]),
        ("matrix-multiply", vec!["--size", "33"]),
    ] {
        let mut args = vec!["mapreduce", app, "--verify", "--json", "--quiet"];
        args.extend(&size);
        let generated = json(&args);
        assert_eq!(
            generated["verified"],
            Value::Bool(true),
            "{app}: {generated}"
        );
        let path = dir.path().join(app);
        let p = path.to_str().unwrap();
        let mut gen = vec!["mapreduce", app, "--generate", p, "--quiet"];
        gen.extend(&size);
        let (ok, _, err) = numakit(&gen);
        assert!(ok, "{app}: {err}");
        args.extend(["--input", p]);
        let from_file = json(&args);
        assert_eq!(
            from_file["verified"],
            Value::Bool(true),
            "{app} from a file"
        );
        if app != "kmeans" {
            // (k-means draws its initial means afresh for points from a file.)
            assert_eq!(
                from_file["summary"], generated["summary"],
                "{app}: the file holds the input"
            );
        }
    }
    // Phoenix++'s own data (rand() from seed 1) converges as the original.
    let k = json(&[
        "mapreduce",
        "kmeans",
        "--points",
        "20000",
        "--clusters",
        "10",
        "--json",
        "--quiet",
    ]);
    assert_eq!(k["summary"]["converged"], Value::Bool(true));
    let odd = dir.path().join("odd.bin");
    std::fs::write(&odd, [1u8, 2, 3, 4, 5]).unwrap();
    let (ok, _, err) = numakit(&["mapreduce", "kmeans", "--input", odd.to_str().unwrap()]);
    assert!(!ok && err.lines().count() == 1, "{err}");
}

#[test]
fn a_sweep_reports_every_thread_count() {
    let r = json(&[
        "mapreduce",
        "word-count",
        "--size-mib",
        "1",
        "--sweep",
        "--json",
        "--quiet",
    ]);
    let sweep = r["sweep"].as_array().expect("a sweep");
    assert_eq!(sweep[0]["threads"].as_u64(), Some(1));
    for s in sweep {
        assert_eq!(
            s["times"].as_array().map(Vec::len),
            Some(3),
            "medians of 3: {s}"
        );
        let spread = &s["seconds"];
        let (min, median, max) = (
            spread["min"].as_f64().unwrap(),
            spread["median"].as_f64().unwrap(),
            spread["max"].as_f64().unwrap(),
        );
        assert!(min <= median && median <= max, "{s}");
        let phases: Vec<f64> = ["split", "map", "reduce", "merge"]
            .iter()
            .map(|phase| s["phases"][phase].as_f64().expect("a phase's seconds"))
            .collect();
        assert!(phases.iter().all(|p| p.is_finite() && *p >= 0.0), "{s}");
        assert!(phases[1] > 0.0, "the map phase took no time: {s}");
        let job = s["seconds"]["max"].as_f64().expect("the job's seconds");
        let sum: f64 = phases.iter().sum();
        assert!(
            sum <= job * 1.01 + 1e-3,
            "phases {sum} s exceed the job's {job} s: {s}"
        );
    }
}

#[test]
fn the_container_changes_nothing_but_speed() {
    for app in TEXT_APPS {
        let mut results = Vec::new();
        for container in ["array", "fixed-hash:64", "hash:1", "array:2"] {
            let r = json(&[
                "mapreduce",
                app,
                "--size-mib",
                "1",
                "--container",
                container,
                "--verify",
                "--json",
                "--quiet",
            ]);
            assert_eq!(r["verified"], Value::Bool(true), "{app} {container}: {r}");
            let mut summary = r["summary"].clone();
            let ran = summary["container"].take();
            assert!(
                ran.as_str()
                    .is_some_and(|s| s.starts_with(container.split(':').next().unwrap())),
                "{app} {container}: {ran}"
            );
            results.push(summary);
        }
        assert!(
            results.windows(2).all(|w| w[0] == w[1]),
            "{app}: {results:?}"
        );
    }
    let (ok, _, err) = numakit(&["mapreduce", "histogram", "--container", "fixed-hash"]);
    assert!(
        !ok && err.contains("fixed-hash:4096") && err.lines().count() == 1,
        "{err}"
    );
    let (ok, _, err) = numakit(&["mapreduce", "pca", "--container", "hash"]);
    assert!(
        !ok && err.contains("--container applies to") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn bad_input_gets_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.bmp");
    std::fs::write(&short, b"BM\0\0").unwrap();
    let missing = dir.path().join("missing.txt");
    for (args, want) in [
        (
            vec!["mapreduce", "histogram", "--input", short.to_str().unwrap()],
            "header cut short",
        ),
        (
            vec![
                "mapreduce",
                "word-count",
                "--input",
                missing.to_str().unwrap(),
            ],
            "cannot read",
        ),
        (vec!["mapreduce", "word-count", "--reps", "0"], "--reps"),
        (
            vec!["mapreduce", "string-match", "--threads", "0"],
            "--threads",
        ),
    ] {
        let (ok, _, err) = numakit(&args);
        assert!(!ok, "{args:?} should fail");
        assert!(
            err.contains(want) && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

#[test]
fn output_holds_the_full_result_and_only_after_success() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("words.csv");
    let r = json(&[
        "mapreduce",
        "word-count",
        "--size-mib",
        "1",
        "--verify",
        "--json",
        "--quiet",
        "--output",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&out).expect("--output written");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("word,count"));
    let rows: Vec<(&str, u64)> = lines
        .map(|l| {
            let (w, n) = l.rsplit_once(',').expect("word,count");
            (w, n.parse().expect("a count"))
        })
        .collect();
    assert_eq!(
        rows.len() as u64,
        r["summary"]["distinct_words"].as_u64().unwrap()
    );
    let total: u64 = rows.iter().map(|r| r.1).sum();
    assert_eq!(total, r["summary"]["total_words"].as_u64().unwrap());
    assert!(
        rows.windows(2).all(|w| w[0].1 >= w[1].1),
        "most frequent first"
    );

    // A run that fails leaves no file behind, and no temporary either.
    let short = dir.path().join("short.bmp");
    std::fs::write(&short, b"BM\0\0").unwrap();
    let bins = dir.path().join("bins.csv");
    let (ok, _, _) = numakit(&[
        "mapreduce",
        "histogram",
        "--input",
        short.to_str().unwrap(),
        "--output",
        bins.to_str().unwrap(),
    ]);
    assert!(!ok);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "only words.csv and short.bmp: {names:?}");

    let means = dir.path().join("means.csv");
    json(&[
        "mapreduce",
        "kmeans",
        "--points",
        "500",
        "--clusters",
        "3",
        "--json",
        "--quiet",
        "--output",
        means.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(&means).unwrap();
    assert_eq!(csv.lines().count(), 4, "a header and three means: {csv}");
    assert!(csv.starts_with("cluster,d0,d1,d2\n"));
}
