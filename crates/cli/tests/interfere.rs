//! `numakit interfere`: a short matrix as JSON and as text, a plan of
//! concurrent jobs with its measured check, and bad input as one line.

use serde_json::Value;

mod command;
use command::outcome as numakit;

#[test]
fn a_short_matrix_has_every_pair_and_class() {
    let args = [
        "interfere",
        "--workloads",
        "scan,probe,compute",
        "--ms",
        "20",
        "--reps",
        "1",
        "--cache-mib",
        "1",
        "--json",
    ];
    let (ok, out, err) = numakit(&args);
    if !ok && err.contains("two CPUs of one node") {
        eprintln!("skipped: {err}");
        return;
    }
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["colocated"].as_array().map(Vec::len), Some(9), "{v}");
    assert_eq!(v["classes"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["sizes"]["cache_bytes"].as_u64(), Some(1 << 20));
    // The victims' hardware counters, or one line saying why there are none.
    match v["counters_unavailable"].as_str() {
        Some(reason) => assert!(!reason.is_empty() && !reason.contains('\n'), "{reason}"),
        None => assert_eq!(
            v["colocated_counters"].as_array().map(Vec::len),
            Some(9),
            "{v}"
        ),
    }
    let (ok, text, err) = numakit(&args[..args.len() - 1]);
    assert!(ok, "{err}");
    assert!(
        text.contains("victim \\ beside") && text.contains("classes"),
        "{text}"
    );
    assert!(text.contains("hardware counters"), "{text}");
}

#[test]
fn bad_input_is_one_line() {
    for (args, want) in [
        (vec!["interfere", "--workloads", "disk"], "unknown workload"),
        (vec!["interfere", "--ms", "0"], "--ms"),
        (vec!["interfere", "--reps", "0"], "--reps"),
    ] {
        let (ok, _, err) = numakit(&args);
        assert!(!ok, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn a_plan_pairs_each_scan_with_a_compute_loop_and_measures_itself() {
    let args = [
        "interfere",
        "--plan",
        "scan,scan,compute,compute",
        "--predict",
        "declared",
        "--ms",
        "20",
        "--reps",
        "1",
        "--cache-mib",
        "1",
        "--buffer-mib",
        "8",
        "--json",
    ];
    let (ok, out, err) = numakit(&args);
    assert!(ok, "{err}");
    let v: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        v["jobs"],
        serde_json::json!(["scan#1", "scan#2", "compute#1", "compute#2"])
    );
    // Whatever the machine, no group holds both scans while a compute
    // loop could take one's place.
    for wave in v["plan"]["waves"].as_array().expect("waves") {
        for group in wave["groups"].as_array().expect("groups") {
            let scans = group["jobs"]
                .as_array()
                .expect("jobs")
                .iter()
                .filter(|j| j["workload"] == "scan")
                .count();
            assert!(scans <= 1, "{v}");
        }
    }
    let check = &v["check"];
    assert!(check["gain"].as_f64().is_some_and(|g| g > 0.0), "{v}");
    assert_eq!(check["naive_seconds"].as_array().map(Vec::len), Some(1));
    assert!(
        v["matrix"].is_null(),
        "declared predictions measure no matrix: {v}"
    );
    let (ok, text, err) = numakit(&args[..args.len() - 1]);
    assert!(ok, "{err}");
    assert!(
        text.contains("why:") && text.contains("kept apart: scan#1 and scan#2"),
        "{text}"
    );
    assert!(text.contains("every job at once anywhere"), "{text}");
}

#[test]
fn bad_plans_are_one_line() {
    let many = vec!["compute"; 33].join(",");
    for (args, want) in [
        (vec!["interfere", "--plan", "scan,disk"], "unknown workload"),
        (vec!["interfere", "--predict", "declared"], "--plan"),
        (
            vec!["interfere", "--plan", "scan", "--predict", "guess"],
            "--predict",
        ),
        (
            vec![
                "interfere",
                "--plan",
                many.as_str(),
                "--no-check",
                "--predict",
                "declared",
            ],
            "at most 32",
        ),
    ] {
        let (ok, _, err) = numakit(&args);
        assert!(!ok, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}
