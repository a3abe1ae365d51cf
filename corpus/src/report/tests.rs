#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn result(id: &str, kind: &'static str, group: &str) -> CaseResult {
    CaseResult {
        id: id.to_owned(),
        corpus: "corpus".to_owned(),
        group: group.to_owned(),
        kind,
        file: format!("corpus/{id}.py"),
        technique: "t".to_owned(),
        expect_static: None,
        effects: Vec::new(),
        policy: Some(StaticVerdict {
            decision: "deny".to_owned(),
            rules: vec!["IMP101".to_owned()],
        }),
        denied_statically: true,
        runtime: None,
        stopped_by_runtime: None,
        jail: None,
        contained: Some(true),
        full: None,
        stopped: Some(true),
        pool: None,
        contained_in_pool: None,
        outcome: CaseStatus::Pass,
        mismatches: Vec::new(),
        cause: None,
        notes: Vec::new(),
        time_ms: 1500,
    }
}

fn report(cases: Vec<CaseResult>) -> Report {
    Report {
        warden: "warden".to_owned(),
        rules: None,
        passes: Pass::ALL.to_vec(),
        run_as: None,
        jobs: 2,
        wall_ms: 61_000,
        corpora: Vec::new(),
        notes: vec!["a <note>".to_owned()],
        summary: Report::summarise(&cases),
        cases,
    }
}

#[test]
fn the_matrix_counts_each_layer() {
    let mut escaped = result("j-escape", "attack", "J");
    escaped.denied_statically = false;
    escaped.contained = Some(false);
    escaped.stopped = Some(false);
    escaped.mismatch(
        MismatchKind::Escape,
        "jail",
        "no-connect tcp4:127.0.0.1:5758: 1 event(s)".to_owned(),
    );
    escaped.finish();
    let mut fp = result("pandas-x", "benign", "BENIGN");
    fp.mismatch(MismatchKind::FalsePositive, "policy", "denied".to_owned());
    fp.finish();
    let report = report(vec![result("a-one", "attack", "A"), escaped, fp]);
    let s = &report.summary;
    assert_eq!(
        (s.attacks, s.escapes, s.false_positives, s.failed),
        (2, 1, 1, 2)
    );
    assert_eq!(s.attack_matrix.len(), 2);
    assert_eq!(s.attack_matrix[0].group, "A");
    assert_eq!(s.attack_matrix[1].escapes, 1);
    assert!(!report.passed());
    let text = human(&report);
    assert!(text.contains("FAILED (2 cases)"), "{text}");
    assert!(
        text.contains("[jail] Escape: no-connect tcp4:127.0.0.1:5758"),
        "{text}"
    );
    let md = markdown(&report);
    assert!(
        md.contains("| corpus | A | 1 | 1 (100%) | – | 1 (100%) | 1 | 1 | 0 | 1.5s |"),
        "{md}"
    );
    assert!(md.contains("a &lt;note>"));
    // No case had a runtime pass (a warden without hooks): no runtime figure.
    assert!(!headline(&report).contains("runtime layer"), "{md}");
}

/// A runtime pass's result: stopped by the runtime layer with `rule`, or ended with `status`.
fn runtime_run(status: &str, rule: Option<&str>) -> PassResult {
    PassResult {
        status: Some(status.to_owned()),
        exit_code: Some(1),
        warden_exit_code: Some(0),
        time_ms: 200,
        stopped_by: rule.map(|rule| StoppedBy {
            layer: "runtime".to_owned(),
            rule: Some(rule.to_owned()),
            event: Some("os.system".to_owned()),
            errno: None,
        }),
        same_run_as: None,
        warm: None,
        checks: Vec::new(),
    }
}

#[test]
fn the_pool_pass_counts_contained_and_warm_runs_and_fails_cold_ones() {
    let pooled = |warm: bool| PassResult {
        warm: Some(warm),
        ..runtime_run("error", Some("PROC801"))
    };
    let mut warm = result("j-os-system", "attack", "J");
    warm.pool = Some(pooled(true));
    warm.contained_in_pool = Some(true);
    let mut cold = result("j-os-popen", "attack", "J");
    cold.pool = Some(pooled(false));
    cold.contained_in_pool = Some(true);
    cold.mismatch(MismatchKind::Cold, "pool", "ran cold".to_owned());
    let mut not_sent = result("l-latin1", "attack", "L");
    not_sent.notes.push("not sent through the pool".to_owned());
    let mut benign = result("pandas-groupby", "benign", "BENIGN");
    benign.denied_statically = false;
    benign.pool = Some(PassResult {
        warm: Some(true),
        ..runtime_run("ok", None)
    });
    for c in [&mut warm, &mut cold, &mut not_sent, &mut benign] {
        c.finish();
    }
    let mut report = report(vec![warm, cold, not_sent, benign]);
    report.passes = vec![Pass::Pool];
    let s = &report.summary;
    assert_eq!(
        (
            s.attacks_through_pool,
            s.attacks_contained_in_pool,
            s.attacks_warm_in_pool,
            s.attacks_cold_in_pool
        ),
        (2, 2, 1, 1)
    );
    assert!(!report.passed());
    let md = markdown(&report);
    assert!(
        md.contains("| corpus | group | cases | pool | warm | escapes |"),
        "{md}"
    );
    assert!(
        md.contains("| corpus | J | 2 | 2 (100%) | 1/2 | 0 |"),
        "{md}"
    );
    assert!(md.contains("| corpus | L | 1 | 0 (–) | 0/0 | 0 |"), "{md}");
    assert!(
        headline(&report)
            .contains("through the warm pool 2 contained of 2 (1 warm, 1 cold), escapes 0"),
        "{}",
        headline(&report)
    );
    assert!(
        headline(&report).contains("through the warm pool 1 (1 warm)"),
        "{}",
        headline(&report)
    );
    let human = human(&report);
    assert!(human.contains("pool:PROC801/warm"), "{human}");
    assert!(human.contains("pool:PROC801/cold"), "{human}");
    assert!(human.contains("[pool] Cold: ran cold"), "{human}");
    // What the server left behind fails the run, whatever the cases say.
    let mut clean = report.clone();
    clean.cases.retain(|c| c.outcome == CaseStatus::Pass);
    clean.summary = Report::summarise(&clean.cases);
    assert!(clean.passed());
    clean.summary.pool_left_behind = vec!["python3 (pid 7) outlived the server".to_owned()];
    assert!(!clean.passed());
    assert!(markdown(&clean).contains("**Left behind by the pool pass's server**"));
}

#[test]
fn the_runtime_column_counts_attacks_the_hooks_stopped() {
    let mut stopped = result("j-os-system", "attack", "J");
    stopped.runtime = Some(runtime_run("error", Some("PROC801")));
    stopped.stopped_by_runtime = Some(true);
    let mut missed = result("j-rt-missed", "attack", "J");
    missed.runtime = Some(runtime_run("ok", None));
    missed.stopped_by_runtime = Some(false);
    missed.mismatch(
        MismatchKind::Runtime,
        "runtime",
        "expected the runtime layer to stop it with PROC801, but no layer stopped it".to_owned(),
    );
    missed.finish();
    let mut shared = result("a-allowed", "attack", "A");
    shared.denied_statically = false;
    shared.runtime = Some(runtime_run("error", Some("ATTR303")).shared_from(Pass::Full));
    shared.stopped_by_runtime = Some(true);
    let mut fp = result("pandas-y", "benign", "BENIGN");
    fp.denied_statically = false;
    fp.runtime = Some(runtime_run("error", Some("IMP101")));
    fp.mismatch(
        MismatchKind::FalsePositive,
        "runtime",
        "benign code was stopped by the runtime layer".to_owned(),
    );
    fp.finish();
    let report = report(vec![stopped, missed, shared, fp]);
    let s = &report.summary;
    assert_eq!(
        (
            s.attacks_stopped_by_runtime,
            s.runtime_mismatches,
            s.false_positives,
            s.runtime_false_positives
        ),
        (2, 1, 1, 1)
    );
    let j = s.attack_matrix.iter().find(|r| r.group == "J").unwrap();
    assert_eq!((j.stopped_by_runtime, j.runtime_runs), (1, 2));
    assert_eq!(s.benign_table[0].false_positives, 0, "not the policy's");
    assert_eq!(s.benign_table[0].runtime_false_positives, 1);
    assert_eq!(s.benign_table[0].ran_ok, 0);

    let md = markdown(&report);
    assert!(
        md.contains("| corpus | group | cases | policy | runtime | jail | both | stopped | escapes | time (sum) |"),
        "{md}"
    );
    assert!(
        md.contains("| corpus | J | 2 | 2 (100%) | 1 (50%) | 2 (100%) | 2 | 2 | 0 | 3.0s |"),
        "{md}"
    );
    assert!(
        md.contains("| corpus | A | 1 | 0 (0%) | 1 (100%) |"),
        "{md}"
    );
    assert!(md.contains("*Runtime*: the runtime layer alone"), "{md}");
    assert!(md.contains("runtime false positives"), "{md}");
    assert!(
        md.contains("runtime pass, Runtime: expected the runtime layer to stop it with PROC801"),
        "{md}"
    );
    let line = headline(&report);
    assert!(
        line.contains("stopped by the runtime layer alone 2 (67%)")
            && line.contains("runtime false positives 1"),
        "{line}"
    );

    let text = human(&report);
    let case_line = text.lines().find(|l| l.contains("j-os-system")).unwrap();
    assert!(case_line.contains("runtime:PROC801"), "{case_line}");
    assert!(
        text.lines()
            .find(|l| l.contains("j-rt-missed") && l.starts_with("FAIL"))
            .is_some_and(|l| l.contains("runtime:ok")),
        "{text}"
    );
    assert!(
        text.contains("2 stopped by the runtime layer alone"),
        "{text}"
    );
    let head = text.lines().find(|l| l.starts_with("Attacks")).unwrap();
    assert!(head.contains("runtime"), "{head}");

    let xml_text = junit(&report);
    assert!(
        xml_text.contains("<property name=\"stopped_by_runtime\" value=\"1\"/>"),
        "{xml_text}"
    );
    assert!(
        xml_text.contains("<property name=\"runtime_false_positives\" value=\"1\"/>"),
        "{xml_text}"
    );
    assert!(
        xml_text.contains(
            "runtime (policy off, hooks on): status error exit Some(1) in 0.2s, stopped by runtime PROC801 (os.system)"
        ),
        "{xml_text}"
    );
    assert!(
        xml_text.contains("stopped by runtime ATTR303 (os.system) (the full pass&apos;s run)"),
        "{xml_text}"
    );
    assert_eq!(
        xml_text.matches("<properties>").count(),
        xml_text.matches("<testsuite ").count()
    );

    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["passes"][1], "runtime");
    assert_eq!(json["summary"]["attacks_stopped_by_runtime"], 2);
    assert_eq!(json["cases"][0]["runtime"]["stopped_by"]["rule"], "PROC801");
    assert_eq!(json["cases"][2]["runtime"]["same_run_as"], "full");
    assert!(json["cases"][0]["runtime"].get("same_run_as").is_none());

    // Without the runtime pass, nothing of it shows.
    let mut without = report.clone();
    without.passes = vec![Pass::Policy, Pass::Jail, Pass::Full];
    let md = markdown(&without);
    for absent in [
        "| runtime |",
        "*Runtime*",
        "runtime layer alone",
        "runtime false",
    ] {
        assert!(!md.contains(absent), "{absent} in {md}");
    }
    assert!(!human(&without).contains("runtime:"));
    assert!(!junit(&without).contains("stopped_by_runtime"));
}

#[test]
fn junit_is_well_formed_and_carries_failures() {
    let mut bad = result("k-\"quoted\"<&>", "attack", "K");
    bad.mismatch(
        MismatchKind::Escape,
        "jail",
        "evil \u{1b}[31m text".to_owned(),
    );
    bad.finish();
    let mut skipped = result("ds-1", "skipped", "Pandas");
    skipped.notes.push("needs network".to_owned());
    skipped.finish();
    let xml_text = junit(&report(vec![bad, skipped, result("a-1", "attack", "A")]));
    assert!(
        xml_text.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
        "{xml_text}"
    );
    assert!(xml_text.contains("name=\"k-&quot;quoted&quot;&lt;&amp;&gt;\""));
    assert!(xml_text.contains("<failure type=\"Escape\""));
    assert!(xml_text.contains("<skipped message=\"needs network\"/>"));
    assert!(!xml_text.contains('\u{1b}'));
    let opens = xml_text.matches("<testcase ").count();
    let closes = xml_text.matches("</testcase>").count();
    assert_eq!(opens, closes);
}
