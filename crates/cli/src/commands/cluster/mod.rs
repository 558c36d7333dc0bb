//! `numakit cluster join`: one process of the distributed join (started
//! from a hostfile, srun or mpirun), or, with `--local P`, P of them on
//! this machine (see [`local`]). The sink (process 0) prints the
//! whole join's result and every process's metrics; the others print
//! their own. With `--sink files:DIR` every process writes its rows into
//! the run's staging directory and the sink publishes them as a whole
//! (see [`numakit_cluster::result_dir`]).
//!
//! This module runs one process; it does not start processes (srun,
//! mpirun, a hostfile's user or [`local`] do).

pub mod args;
pub mod local;
pub mod plan;
pub mod report;
pub mod sys;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, ensure, Result};
use numakit_cluster::launch;
use numakit_cluster::message::Message;
use numakit_cluster::partition::generated_share;
use numakit_cluster::reference::single_machine;
use numakit_cluster::result_dir::{self, ResultDir};
use numakit_cluster::transport::connect::Endpoints;
use numakit_cluster::transport::Transport;
use numakit_cluster::{
    run_process_delivering, ClusterError, Output, PartOutcome, ProcessRun, ResultRow,
};
use numakit_ops::datagen::generate;
use numakit_ops::Relation;
use numakit_placement::PlacementMode;
use numakit_pool::Pool;

use crate::commands::cluster::args::{ClusterCommand, ClusterJoinArgs};
use crate::commands::cluster::report::{render_process, render_sink, ProcessOutput, SinkOutput};
use crate::commands::ops::common::{check_verify_size, read_columns, relation_of};
use crate::common::output;
use plan::{check_memory, plan, ClusterJoinPlan};

/// How long a process waits for the slowest peer to finish its part after
/// its own (a lost peer is noticed at once; this bounds a stuck one).
const FINISH_TIMEOUT: Duration = Duration::from_secs(3600);

/// `numakit cluster ...`: runs the subcommand.
pub fn run(command: &ClusterCommand, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    match command {
        ClusterCommand::Join(args) => join(args, mode, json, quiet),
    }
}

fn join(args: &ClusterJoinArgs, mode: PlacementMode, json: bool, quiet: bool) -> Result<()> {
    if let Some(p) = args.local {
        return crate::commands::cluster::local::run(args, p, mode, json, quiet);
    }
    let addresses = match (&args.addresses, &args.hostfile) {
        (Some(list), _) => list.clone(),
        (None, Some(hostfile)) => launch::read_hostfile(hostfile, args.port)?,
        (None, None) => crate::usage_bail!("where are the processes? Pass --local P (P processes on this machine) or --hostfile FILE (see --help)"),
    };
    crate::usage_ensure!(
        args.reps() == 1,
        "--reps needs --local (one process runs one join)"
    );
    let (me, _) = launch::process_index(args.process, addresses.len(), |v| std::env::var(v).ok())?;
    let out = one_process(args, &addresses, me, mode, quiet)?;
    match &out.sink {
        Some(sink) => output::report(json, sink, || render_sink(sink))?,
        None => output::report(json, &out.own, || render_process(&out.own, addresses.len()))?,
    }
    if let Some(sink) = &out.sink {
        ensure!(
            sink.verified != Some(false),
            "wrong result: {}",
            sink.verify_note
        );
    }
    Ok(())
}

/// What one process ends with.
pub struct Ended {
    /// Its own metrics and the files it wrote.
    pub own: ProcessOutput,
    /// The whole join's report, on the sink (process 0) only.
    pub sink: Option<SinkOutput>,
}

/// A fingerprint of the data options, so processes given different data
/// refuse each other at connection time.
fn data_fingerprint(args: &ClusterJoinArgs) -> u64 {
    let text = format!(
        "{}|{}|{}|{:?}|{}|{:?}|{:?}|{}|{:?}",
        args.rows_r,
        args.rows_s,
        args.left_keys,
        args.right_keys,
        args.seed,
        args.left,
        args.right,
        args.key,
        args.payload
    );
    text.bytes().fold(0x8422_2325_cbf2_9ce4u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs process `me` of the join described by `args` over `addresses`.
pub fn one_process(
    args: &ClusterJoinArgs,
    addresses: &[String],
    me: usize,
    mode: PlacementMode,
    quiet: bool,
) -> Result<Ended> {
    let plan = plan(args)?;
    let processes = addresses.len();
    check_memory(args, processes)?;
    let pool = args.pool.build(mode)?;
    if !quiet {
        if let Some(warning) = affinity_warning(&pool) {
            output::note(format_args!("numakit: warning: {warning}"));
        }
    }
    let (left, right) = load_share(&pool, args, &plan, me, processes)?;
    let endpoints = Endpoints {
        process: me,
        addresses: addresses.to_vec(),
        timeout: Duration::from_secs_f64(args.connect_timeout),
        peer_timeout: Duration::from_secs_f64(args.peer_timeout),
        fingerprint: plan.spec.fingerprint() ^ data_fingerprint(args),
    };
    if !quiet {
        output::note(format_args!(
            "numakit: process {me} of {processes}: connecting to {} peer(s)",
            processes - 1
        ));
    }
    let mut transport = numakit_cluster::transport::connect(&endpoints)?;
    if !quiet {
        output::note(format_args!(
            "numakit: process {me} of {processes}: connected; joining"
        ));
    }
    let files = match result_files(&plan, me, transport.as_ref()) {
        Ok(files) => files,
        Err(e) => {
            transport.give_up(&format!("{e:#}"));
            return Err(e);
        }
    };
    let shares = (&left, &right);
    let run = join_and_publish(&pool, args, &plan, transport, shares, files.as_ref(), me)?;
    let sink = sink_output(&pool, args, &plan, processes, &run, files.as_ref())?;
    let own_files = files
        .iter()
        .map(|f| f.published_part(me).display().to_string())
        .collect();
    Ok(Ended {
        own: ProcessOutput::of(&run.own, own_files),
        sink,
    })
}

/// Joins, has every process deliver its part of `--sink files:DIR` into
/// the staging directory, and at the sink publishes them once all are
/// complete (a failed run's staging directory is removed by the sink).
fn join_and_publish(
    pool: &Pool,
    args: &ClusterJoinArgs,
    plan: &ClusterJoinPlan,
    transport: Box<dyn Transport<Message>>,
    (left, right): (&Relation, &Relation),
    files: Option<&ResultDir>,
    me: usize,
) -> Result<ProcessRun> {
    let fail_part = args.fail_part_write == Some(me);
    let mut deliver = |rows: &[Vec<ResultRow>]| Some(write_part(files?, me, rows, fail_part));
    let joined = run_process_delivering(
        pool,
        transport,
        left,
        right,
        &plan.spec,
        FINISH_TIMEOUT,
        &mut deliver,
    );
    let published = joined.map_err(anyhow::Error::from).and_then(|run| {
        if let (Some(f), Some(cluster)) = (files, &run.cluster) {
            f.publish(&cluster.parts, &cluster.result)
                .map_err(sink_error)?;
        }
        Ok(run)
    });
    if let Some(f) = files {
        if me == 0 && published.is_err() {
            f.discard();
        }
        crate::process::signals::keep(f.staging());
    }
    published
}

/// Writes process `me`'s part of `--sink files:DIR` into the staging
/// directory, as its report to the sink has it; `fail` (testing,
/// `--fail-part-write`) fails after writing it.
fn write_part(files: &ResultDir, me: usize, rows: &[Vec<ResultRow>], fail: bool) -> PartOutcome {
    let record = files.write_part(me, rows).map_err(|e| e.to_string())?;
    if fail {
        return Err(format!(
            "injected failure after writing {} (--fail-part-write)",
            record.file
        ));
    }
    Ok(record)
}

/// A result-directory error in the user's words: they gave the directory
/// as `--sink files:DIR`.
fn sink_error(e: ClusterError) -> anyhow::Error {
    match e {
        ClusterError::ResultDirRefused { dir, why } => {
            anyhow!("--sink files:{}: {why}", dir.display())
        }
        ClusterError::PartNotVisible {
            process,
            file,
            staging,
        } => anyhow!(
            "process {process}'s {file} is not in {} here: --sink files:DIR needs a directory that every process sees (one machine, or a shared file system)",
            staging.display()
        ),
        e => e.into(),
    }
}

/// This run's result directory (`--sink files:DIR`), staged for removal
/// should the process be interrupted; the sink first checks that DIR may
/// be replaced, before any work.
fn result_files(
    plan: &ClusterJoinPlan,
    me: usize,
    transport: &dyn Transport<Message>,
) -> Result<Option<ResultDir>> {
    let Some(dir) = &plan.files_dir else {
        return Ok(None);
    };
    let files = ResultDir::new(dir, transport.run_id()).map_err(sink_error)?;
    if me == 0 {
        result_dir::check_replaceable(dir).map_err(sink_error)?;
    }
    crate::process::signals::remove_on_interrupt(files.staging());
    Ok(Some(files))
}

/// The sink's report of a finished run (`None` elsewhere), verified when
/// asked.
fn sink_output(
    pool: &Pool,
    args: &ClusterJoinArgs,
    plan: &ClusterJoinPlan,
    processes: usize,
    run: &ProcessRun,
    files: Option<&ResultDir>,
) -> Result<Option<SinkOutput>> {
    let Some(cluster) = &run.cluster else {
        return Ok(None);
    };
    let mut sink = SinkOutput::new(&plan.spec, processes, cluster);
    if let Some(f) = files {
        for (i, p) in sink.per_process.iter_mut().enumerate() {
            p.files = vec![f.published_part(i).display().to_string()];
        }
    }
    if args.verify {
        verify(pool, args, plan, processes, &mut sink)?;
    }
    Ok(Some(sink))
}

/// mpirun binds each process to one core unless told otherwise; a pool
/// on one CPU would silently run one thread.
fn affinity_warning(pool: &Pool) -> Option<String> {
    let topology = pool.topology();
    let (allowed, online) = (topology.allowed.cpus.len(), topology.cpus.len());
    let launched = launch::RANK_VARIABLES
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    (launched && allowed < online).then(|| {
        format!(
            "this process may use only {allowed} of the machine's {online} CPUs (its launcher bound it), so its pool has {} thread(s); start it with `mpirun --bind-to none` or `srun --cpu-bind=none` to give it the machine",
            pool.workers()
        )
    })
}

fn load_share(
    pool: &Pool,
    args: &ClusterJoinArgs,
    plan: &ClusterJoinPlan,
    me: usize,
    processes: usize,
) -> Result<(Relation, Relation)> {
    match (&args.left, &args.right) {
        (Some(l), Some(r)) => Ok((read_file(pool, l, me, args)?, read_file(pool, r, me, args)?)),
        _ => Ok((
            generated_share(pool, &plan.left_spec, me, processes)?,
            generated_share(pool, &plan.right_spec, me, processes)?,
        )),
    }
}

/// Process `me`'s relation from `pattern` (`{process}` replaced).
fn read_file(pool: &Pool, pattern: &str, me: usize, args: &ClusterJoinArgs) -> Result<Relation> {
    let path = PathBuf::from(pattern.replace("{process}", &me.to_string()));
    let mut columns = vec![args.key.clone()];
    columns.extend(args.payload.clone());
    let table = read_columns(&path, &columns)?;
    let keys = &table.column(&args.key)?.values;
    match &args.payload {
        Some(col) => {
            let payloads = table.column(col)?.values.clone();
            relation_of(pool, keys, |i| payloads[i])
        }
        None => relation_of(pool, keys, |i| ((me as u64) << 48) | i as u64),
    }
}

/// The sink checks the merged result against the single-machine join of
/// all processes' data.
fn verify(
    pool: &Pool,
    args: &ClusterJoinArgs,
    plan: &ClusterJoinPlan,
    processes: usize,
    sink: &mut SinkOutput,
) -> Result<()> {
    let (left, right) = match (&args.left, &args.right) {
        (Some(l), Some(r)) => (
            all_files(pool, l, processes, args)?,
            all_files(pool, r, processes, args)?,
        ),
        _ => {
            check_verify_size(
                true,
                plan.left_spec.rows.saturating_add(plan.right_spec.rows),
            )?;
            (
                generate(pool, &plan.left_spec)?,
                generate(pool, &plan.right_spec)?,
            )
        }
    };
    check_verify_size(true, (left.len() + right.len()) as u64)?;
    let want = single_machine(pool, &left, &right, plan.spec.predicate, plan.spec.output)?;
    let got = &sink.result;
    let same = got.rows == want.rows && got.checksum == want.checksum && got.sample == want.sample;
    sink.verified = Some(same);
    let compared = match plan.spec.output {
        Output::Count => "rows only: the result was counted (--sink count, or an inequality join too large to hash), not hashed",
        _ => "rows and an order-independent hash of every (key, left payload, right payload)",
    };
    sink.verify_note = if same {
        format!(
            "the same as numakit's single-machine join ({} rows; compared: {compared})",
            want.rows
        )
    } else {
        format!(
            "{} rows (checksum {:#x}), but the single-machine join gives {} rows ({:#x})",
            got.rows, got.checksum, want.rows, want.checksum
        )
    };
    Ok(())
}

fn all_files(
    pool: &Pool,
    pattern: &str,
    processes: usize,
    args: &ClusterJoinArgs,
) -> Result<Relation> {
    let mut rows = Vec::new();
    for p in 0..processes {
        rows.extend(read_file(pool, pattern, p, args)?.to_vec());
    }
    Ok(Relation::from_tuples(pool, &rows)?)
}
