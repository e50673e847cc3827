//! The MPI backend gives the local backend's results: `mpirun -np 3 --oversubscribe dpca run
//! --backend mpi` on small SSI/FAPS (with the leakage attack, which reads the server's
//! transcript) and DCF-PCA manifests writes the same trace.csv and summary.csv as `dpca run`,
//! time columns aside; a run resumes; a rank that cannot build its data ends the job on every
//! rank with a clear message. Needs the `mpi` feature and Open MPI's mpirun (`make test`
//! installs both).
#![cfg(feature = "mpi")]

use dpca_bench::fed::mpi::{clients_of, decode, encode};
use dpca_bench::fed::Message;
use ndarray::{arr2, Array2, ShapeBuilder};
use std::path::Path;
use std::process::{Command, Output};

/// Subspace: SSI, FAPS and LocalPower over 5 uneven clients (2 and 3 per rank), the attack on
/// client 2 (on rank 1) recorded for 10 rounds.
const SUBSPACE: &str = r#"
id = "mpi_subspace"
paper = "faps"
paper_file = "000_87ac87c3d542a13b.txt"
title = "MPI backend test, subspace"
reproduces = "nothing"
seed = 11

[data]
generator = "svd"
spectrum = "geometric"
n = 40
m = 990
xi = 1.2

[partition]
scheme = "uneven"
clients = 5

[problem]
p = 4

[stop]
max_rounds = 60
objective_tol = 1e-10

[attack]
client = 2
max_rounds = 10

[[methods]]
name = "ssi"
label = "SSI"

[[methods]]
name = "faps"
label = "FAPS"

[[methods]]
name = "localpower"
label = "LocalPower"
"#;

/// Robust PCA: DCF-PCA over 4 clients (2 per rank) and CF-PCA, centralised (one client, on
/// rank 1), whose metrics read the clients' L_i and S_i through the evaluation channel.
const ROBUST: &str = r#"
id = "mpi_robust"
paper = "dcfpca"
paper_file = "004_db919d10e2190205.txt"
title = "MPI backend test, robust"
reproduces = "nothing"
seed = 12

[data]
generator = "robust"
n = 60
m = 80
rank = 3
sparsity = 0.05
magnitude = "sign"

[partition]
scheme = "even"
clients = 4

[problem]
kind = "robust"

[stop]
max_rounds = 40
own_criterion = true

[[methods]]
name = "dcfpca"
label = "DCF-PCA"
params = { local_steps = 5, eta0 = 0.01, lambda = 0.2, max_rounds = 40 }

[[methods]]
name = "cfpca"
label = "CF-PCA"
params = { local_steps = 1, eta0 = 0.005, lambda = 1.3, max_rounds = 40 }
"#;

fn dpca() -> &'static str {
    env!("CARGO_BIN_EXE_dpca")
}

/// `mpirun -np 3 --oversubscribe dpca ARGS` in `cwd` (as root too).
fn mpirun(cwd: &Path, args: &[&str]) -> Output {
    Command::new("mpirun")
        .args(["-np", "3", "--oversubscribe", dpca()])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(cwd)
        .output()
        .expect("mpirun (Debian openmpi-bin; `make deps-system` installs it)")
}

fn local(cwd: &Path, args: &[&str]) -> Output {
    Command::new(dpca())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The CSV without its time column.
fn without_time(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let t = header.iter().position(|h| *h == "time_s").unwrap();
    text.lines()
        .map(|l| {
            l.split(',')
                .enumerate()
                .filter(|(i, _)| *i != t)
                .map(|(_, c)| c)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Run `manifest` locally and under MPI; the CSVs must be identical, time aside.
fn same_as_local(d: &Path, manifest: &str, body: &str, folder: &str) {
    std::fs::write(d.join(manifest), body).unwrap();
    let common = ["--threads", "1", "--cache", "cache"];
    let mut args = vec!["run", manifest, "--results", "local"];
    args.extend(common);
    ok(&local(d, &args), "local run");
    let mut args = vec!["run", manifest, "--results", "mpi", "--backend", "mpi"];
    args.extend(common);
    ok(&mpirun(d, &args), "MPI run");
    for f in ["trace.csv", "summary.csv"] {
        let (a, b) = (d.join("local").join(folder), d.join("mpi").join(folder));
        assert_eq!(
            without_time(&a.join(f)),
            without_time(&b.join(f)),
            "{folder}/{f}"
        );
    }
}

#[test]
fn mpi_results_equal_the_local_backends_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    same_as_local(
        d,
        "mpi_subspace.toml",
        SUBSPACE,
        "faps/mpi_subspace/default",
    );
    let trace = std::fs::read_to_string(d.join("mpi/faps/mpi_subspace/default/trace.csv")).unwrap();
    assert!(
        trace.contains("leak_err"),
        "the attack ran on the transcript"
    );
    same_as_local(d, "mpi_robust.toml", ROBUST, "dcfpca/mpi_robust/default");

    // Resume: the stored runs are loaded, nothing is recomputed, the CSVs stay the same.
    let before = without_time(&d.join("mpi/dcfpca/mpi_robust/default/summary.csv"));
    let o = mpirun(
        d,
        &[
            "run",
            "mpi_robust.toml",
            "--results",
            "mpi",
            "--backend",
            "mpi",
            "--cache",
            "cache",
        ],
    );
    ok(&o, "resumed MPI run");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        !log.contains("rounds,"),
        "a stored run was recomputed: {log}"
    );
    let summary = d.join("mpi/dcfpca/mpi_robust/default/summary.csv");
    assert_eq!(without_time(&summary), before);
}

#[test]
fn a_rank_that_cannot_build_its_data_ends_the_job_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The other ranks start in a folder without the manifest: the multi-machine mistake of
    // a manifest present on rank 0's machine only.
    let body = SUBSPACE
        .replace("[attack]\nclient = 2\nmax_rounds = 10\n", "")
        .replace("mpi_subspace", "only_here");
    std::fs::write(d.join("only_here.toml"), body).unwrap();
    std::fs::create_dir(d.join("elsewhere")).unwrap();
    let script = format!(
        "if [ \"$OMPI_COMM_WORLD_RANK\" != 0 ]; then cd elsewhere; fi; exec {} \"$@\"",
        dpca()
    );
    let o = Command::new("mpirun")
        .args(["-np", "3", "--oversubscribe", "sh", "-c", &script, "sh"])
        .args([
            "run",
            "only_here.toml",
            "--results",
            "mpi",
            "--backend",
            "mpi",
        ])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("rank 1: cannot build its data") && err.contains("only_here.toml"),
        "{err}"
    );
    // One message per fault: rank 0's, naming the rank; the others stop quietly.
    assert_eq!(err.matches("cannot build its data").count(), 1, "{err}");
    assert!(!err.contains("stopped: rank 0 failed"), "{err}");
}

/// A manifest error under MPI: printed once, by rank 0, and exit status 2 as locally.
#[test]
fn mpi_a_manifest_error_is_one_message_and_exit_2_as_locally() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let body = SUBSPACE.replace("mpi_subspace", "bad").replacen(
        "[stop]",
        "[stop]
bogus = 1",
        1,
    );
    std::fs::write(d.join("bad.toml"), body).unwrap();
    let args = ["run", "bad.toml", "--results", "mpi", "--backend", "mpi"];
    let o = mpirun(d, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(
        err.contains("bad.toml:") && err.contains("stop.bogus"),
        "{err}"
    );
    assert_eq!(o.status.code(), Some(2), "{err}");
    let local = local(d, &args[..4]);
    assert_eq!(local.status.code(), Some(2));
}

#[test]
fn clients_are_spread_in_contiguous_blocks_over_ranks_1_and_up() {
    let spread = |k, r| {
        (0..r)
            .map(|rank| clients_of(rank, k, r))
            .collect::<Vec<_>>()
    };
    assert_eq!(spread(10, 3), vec![0..0, 0..5, 5..10]);
    assert_eq!(spread(5, 3), vec![0..0, 0..2, 2..5]);
    assert_eq!(spread(1, 3), vec![0..0, 0..0, 0..1]);
    assert_eq!(spread(4, 2), vec![0..0, 0..4]);
}

#[test]
fn messages_travel_with_their_layouts_and_numbers() {
    let c = arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]);
    let mut f = Array2::zeros((2, 3).f());
    f.assign(&c);
    let mut inv = c.clone();
    inv.invert_axis(ndarray::Axis(0));
    let msg = Message::new()
        .with("c", c.clone())
        .with("f", f.clone())
        .with("inv", inv.clone())
        .with_scalar("s", 2.5);
    let mut payload = Vec::new();
    let heads = encode(&msg, &mut payload);
    assert_eq!(payload.len() as u64, msg.numbers());
    let back = decode(&heads, &mut &payload[..]).unwrap();
    assert_eq!(back.get("c").unwrap(), &c);
    assert_eq!(back.get("c").unwrap().strides(), c.strides());
    assert_eq!(back.get("f").unwrap(), &f);
    assert_eq!(back.get("f").unwrap().strides(), f.strides());
    assert_eq!(back.get("inv").unwrap(), &inv);
    assert_eq!(back.scalar("s").unwrap(), 2.5);
    let names: Vec<&str> = back.parts().map(|(n, _)| n).collect();
    assert_eq!(names, ["c", "f", "inv", "s"]);
    // A short payload is an error, not a panic.
    assert!(decode(&heads, &mut &payload[..5]).is_err());
}

/// `mpirun ARGS` (MPI's own arguments, then the program's) in `cwd`, killed if it runs past
/// `limit`; its output and how long it ran.
fn mpirun_within(
    cwd: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> (Output, std::time::Duration) {
    let start = std::time::Instant::now();
    let mut child = Command::new("mpirun")
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().ok();
            let o = child.wait_with_output().unwrap();
            panic!(
                "mpirun still running after {limit:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (child.wait_with_output().unwrap(), start.elapsed())
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(files(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

/// A worker that stops answering (it stops itself with SIGSTOP when round 2 arrives) ends the
/// job after --mpi-timeout with one message naming the rank and the round, a failure status,
/// and no temporary or half-written file; without the timeout rank 0 waited forever.
#[test]
fn mpi_a_stalled_worker_ends_the_job_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = stall_job(d, "stalls", "3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stop = [("DPCA_TEST_MPI_STOP_AT", "1:2")];
    let (o, took) = mpirun_within(d, &args, &stop, std::time::Duration::from_secs(90));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    let needle = "rank 1 did not answer round 2 within 3 s (--mpi-timeout)";
    assert_eq!(err.matches(needle).count(), 1, "{err}");
    assert!(took >= std::time::Duration::from_secs(3), "{took:?}");
    let left: Vec<_> = files(&d.join("mpi"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The stalled run (SSI, the first) was not stored.
    assert!(!d.join("mpi/faps/stalls/default/trace.csv").exists());
}

/// A worker that stops after answering round 2 and its evaluation, before it joins round 3's
/// broadcast: with a
/// payload above MPI's eager limit (n = 400, p = 4: 12.8 kB) rank 0's side of the broadcast
/// cannot complete, and it gives up at --mpi-timeout with one message and a failure status
/// instead of waiting forever; no process is left.
#[test]
fn mpi_a_worker_stopped_before_a_broadcast_ends_the_job_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut args = stall_job(d, "stallsb", "3");
    args.extend(["--set".to_string(), "data.n=400".to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stop = [("DPCA_TEST_MPI_STOP_AT", "1:2:replied")];
    let (o, took) = mpirun_within(d, &args, &stop, std::time::Duration::from_secs(90));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    let needle = "a rank did not take rank 0's broadcast within 3 s (--mpi-timeout)";
    assert_eq!(err.matches(needle).count(), 1, "{err}");
    assert!(took >= std::time::Duration::from_secs(3), "{took:?}");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let left = processes_in(d);
    assert!(left.is_empty(), "{left:?}");
    assert!(!d.join("mpi/faps/stallsb/default/trace.csv").exists());
}

/// Ranks started with different manifests (mpirun's `A : B` form): the workers refuse rank 0's
/// run with one message naming both, instead of silently running rank 0's; a copy of rank 0's
/// manifest at another path (as on another machine) is the same manifest and runs.
#[test]
fn mpi_workers_refuse_a_manifest_other_than_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let body = SUBSPACE
        .replace("[attack]\nclient = 2\nmax_rounds = 10\n", "")
        .replace("mpi_subspace", "a");
    std::fs::write(d.join("a.toml"), &body).unwrap();
    std::fs::write(d.join("b.toml"), body.replace("\"a\"", "\"b\"")).unwrap();
    std::fs::create_dir(d.join("copy")).unwrap();
    std::fs::write(d.join("copy/a.toml"), &body).unwrap();
    let tail = ["--results", "mpi", "--backend", "mpi", "--threads", "1"];
    let job = |worker: &str| {
        let mut a = vec!["--oversubscribe", "-np", "1", dpca(), "run", "a.toml"];
        a.extend(tail);
        a.extend([":", "-np", "2", dpca(), "run", worker]);
        a.extend(tail);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let limit = std::time::Duration::from_secs(120);
    let args = job("b.toml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, _) = mpirun_within(d, &args, &[], limit);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    let needle = "rank 1: its command line names b.toml, but rank 0 runs a.toml";
    assert_eq!(err.matches(needle).count(), 1, "{err}");
    assert!(!d.join("mpi/faps/a/default/summary.csv").exists());

    let args = job("copy/a.toml");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (o, _) = mpirun_within(d, &args, &[], limit);
    ok(&o, "the same manifest at another path");
}

/// Processes whose working folder is `dir` (every rank of a job started there), after giving
/// mpirun's clean-up up to 5 s.
fn processes_in(dir: &Path) -> Vec<String> {
    let dir = std::fs::canonicalize(dir).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let mut found = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            if std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir) {
                let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
                found.push(format!(
                    "{name}: {}",
                    String::from_utf8_lossy(&cmd).replace('\0', " ")
                ));
            }
        }
        if found.is_empty() || std::time::Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The stall test's manifest (SUBSPACE without the attack) in `d` as `<name>.toml`, and the
/// arguments of an mpirun of it with `--mpi-timeout` `timeout`.
fn stall_job(d: &Path, name: &str, timeout: &str) -> Vec<String> {
    let body = SUBSPACE
        .replace("[attack]\nclient = 2\nmax_rounds = 10\n", "")
        .replace("mpi_subspace", name);
    std::fs::write(d.join(format!("{name}.toml")), body).unwrap();
    let toml = format!("{name}.toml");
    [
        "-np",
        "3",
        "--oversubscribe",
        dpca(),
        "run",
        &toml,
        "--results",
        "mpi",
        "--backend",
        "mpi",
        "--threads",
        "1",
        "--mpi-timeout",
        timeout,
    ]
    .map(String::from)
    .to_vec()
}

/// Rank 0 stopped (it stops itself with SIGSTOP once it has broadcast round 2): the workers,
/// which hear its heartbeats no more, end the job after --mpi-timeout with one message, a
/// failure status and no process left (mpirun kills the stopped rank 0 too); before, they waited
/// in their broadcast forever.
#[test]
fn mpi_a_stalled_rank_0_ends_the_job_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = stall_job(d, "stalls0", "3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let stop = [("DPCA_TEST_MPI_STOP_AT", "0:2")];
    let (o, took) = mpirun_within(d, &args, &stop, std::time::Duration::from_secs(90));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    let needle = "rank 0 sent nothing for 3 s (--mpi-timeout)";
    assert_eq!(err.matches(needle).count(), 1, "{err}");
    assert_eq!(err.matches("sent nothing").count(), 1, "{err}");
    assert!(took >= std::time::Duration::from_secs(3), "{took:?}");
    // Rank 1 says it at the timeout; the others would wait a further 2 s.
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    let left = processes_in(d);
    assert!(left.is_empty(), "{left:?}");
    assert!(!d.join("mpi/faps/stalls0/default/trace.csv").exists());
}

/// Rank 0 busy outside MPI (asleep for 6 s before round 2, as while it builds a reference or
/// writes results) far longer than --mpi-timeout (2 s): its heartbeat thread keeps the workers
/// waiting, and the job ends well, every run stored.
#[test]
fn mpi_a_busy_rank_0_is_not_taken_for_a_stopped_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let args = stall_job(d, "busy0", "2");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let busy = [("DPCA_TEST_MPI_BUSY_AT", "2:6")];
    let (o, took) = mpirun_within(d, &args, &busy, std::time::Duration::from_secs(300));
    ok(&o, "rank 0 busy for 6 s with --mpi-timeout 2");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("sent nothing"), "{err}");
    // Each of the three methods' runs slept at its round 2.
    assert!(took >= std::time::Duration::from_secs(18), "{took:?}");
    let summary = std::fs::read_to_string(d.join("mpi/faps/busy0/default/summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 4, "{summary}");
}
