//! In-process throughput of [`warden_policy::check`] (issue 2: at least 10 MB/s of source per core).
//!
//! Every benchmark runs single-threaded on criterion's thread, so bytes per second is per core.
//! Inputs:
//! - `ds1000`: the 1000 DS-1000 programs (`../shared/corpora/ds1000/programs`), one `check` each, as
//!   one batch; skipped with a note when the shared corpora are not next to the repository;
//! - `benign`: the benign corpus (`corpus/benign`), one `check` each, as one batch;
//! - `large-file`: one module of about 300 KB, each DS-1000 program (or benign case, without the
//!   shared corpora) wrapped in its own `def program_NNNN():`, so its names stay unique per scope as in
//!   a long hand-written module;
//! - `per-file`: one two-line program (`import math` and a `print`), checked alone: what every file
//!   costs whatever its size. Work that depends only on the policy belongs in the policy, built once
//!   when it is loaded; done per file it shows here first (issue 26: 3.3× ruff when it was);
//! - `ds1000-on-worker`: the DS-1000 batch through [`warden_policy::check_on_worker`], which spawns a
//!   thread per program: the difference to `ds1000` is the price of that thread.
//!
//! Run: `cargo bench -p warden-policy --bench check` (or `bench/check/inprocess.sh` for the medians).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use warden_policy::{Decision, Policy, Rule};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `*.py` files of a directory, sorted, read into memory.
fn programs(dir: &Path) -> Option<Vec<Vec<u8>>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
        .collect();
    paths.sort();
    let files = paths
        .iter()
        .map(|path| std::fs::read(path).unwrap_or_else(|err| panic!("{}: {err}", path.display())))
        .collect();
    Some(files)
}

/// One module of at least `target` bytes: each program becomes the body of its own function.
fn large_module(sources: &[Vec<u8>], target: usize) -> Vec<u8> {
    let mut out = String::new();
    for (index, source) in sources.iter().cycle().enumerate() {
        if out.len() >= target {
            break;
        }
        out.push_str(&format!("def program_{index:04}():\n"));
        for line in String::from_utf8_lossy(source).lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("    pass\n\n");
    }
    out.into_bytes()
}

fn total(batch: &[Vec<u8>]) -> u64 {
    batch.iter().map(|program| program.len() as u64).sum()
}

/// Makes sure a benchmark input is judged in full, not cut short by a syntax or limit finding.
fn assert_fully_checked(name: &str, bytes: &[u8], policy: &Policy) {
    let report = warden_policy::check_on_worker(bytes, policy);
    let cut_short = report.findings.iter().find(|finding| {
        matches!(
            finding.rule,
            Rule::SyntaxError | Rule::SourceLimits | Rule::SourceEncoding
        )
    });
    if let Some(finding) = cut_short {
        panic!("{name}: not checked in full: {}", finding.message);
    }
    let _: Decision = report.decision;
}

fn batch(
    group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    programs: &[Vec<u8>],
    policy: &Policy,
) {
    group.throughput(Throughput::BytesDecimal(total(programs)));
    group.bench_function(name, |b| {
        b.iter(|| {
            for program in programs {
                std::hint::black_box(warden_policy::check(std::hint::black_box(program), policy));
            }
        })
    });
}

fn check(c: &mut Criterion) {
    let policy = Policy::builtin_default().unwrap_or_else(|err| panic!("default policy: {err}"));
    let ds1000 = programs(&repo().join("../shared/corpora/ds1000/programs"));
    let benign = programs(&repo().join("corpus/benign"))
        .unwrap_or_else(|| panic!("corpus/benign is missing"));
    let large = large_module(ds1000.as_deref().unwrap_or(&benign), 300 * 1024);
    assert_fully_checked("large-file", &large, &policy);

    let mut group = c.benchmark_group("check");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    match &ds1000 {
        Some(ds1000) => batch(&mut group, "ds1000", ds1000, &policy),
        None => eprintln!("ds1000: ../shared/corpora/ds1000/programs not found, skipped"),
    }
    batch(&mut group, "benign", &benign, &policy);
    batch(
        &mut group,
        "large-file",
        std::slice::from_ref(&large),
        &policy,
    );
    let tiny: &[u8] = b"import math\nprint(math.sqrt(2))\n";
    assert_fully_checked("per-file", tiny, &policy);
    group.throughput(Throughput::BytesDecimal(tiny.len() as u64));
    group.bench_function("per-file", |b| {
        b.iter(|| std::hint::black_box(warden_policy::check(std::hint::black_box(tiny), &policy)))
    });
    if let Some(ds1000) = &ds1000 {
        group.throughput(Throughput::BytesDecimal(total(ds1000)));
        group.bench_function("ds1000-on-worker", |b| {
            b.iter(|| {
                for program in ds1000 {
                    std::hint::black_box(warden_policy::check_on_worker(program, &policy));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, check);
criterion_main!(benches);
