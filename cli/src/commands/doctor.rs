//! `warden doctor`: which layers this host can enforce, and whether the policy's required ones are there.

use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};
use warden_gateway::jail_config;

use super::exit;
use warden_jail::{Host, Plan};

use super::RulesArg;

/// Report which confinement layers this host can enforce.
///
/// Probes user namespaces, Landlock, seccomp, cgroups (version, controllers, delegation) and the
/// interpreter, then runs a one-line program in the jail and imports, in the jail, every module the
/// policy allows (allowed means importable). Exit status: 0 when every layer the policy requires is
/// available, the smoke run succeeded and every allowed module imports; 1 otherwise; 2 on
/// configuration errors.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub rules: RulesArg,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let policy = args.rules.load()?;
    let config = jail_config::from_policy(&policy)?;
    let host = Host::probe(config.cgroup_parent.as_deref());
    let interpreter = warden_jail::resolve_interpreter(&config.interpreter);
    // The plan's own reasoning and words (`Host::layer`): doctor says what a run would say.
    let mut missing = Vec::new();
    let mut layers = Vec::new();
    for state in host.layers() {
        let required = config.required_layers.contains(&state.layer);
        if required && !state.available {
            missing.push(state.layer);
        }
        layers.push(json!({
            "layer": state.layer.name(),
            "required": required,
            "available": state.available,
            "detail": state.detail,
        }));
    }
    let interpreter_report = match &interpreter {
        Ok(found) => json!({
            "configured": found.configured, "real": found.real, "prefixes": found.prefixes, "ok": true
        }),
        Err(err) => {
            json!({ "configured": config.interpreter, "ok": false, "error": err.to_string() })
        }
    };
    let smoke = match interpreter {
        Ok(found) if missing.is_empty() => smoke_run(&config, &host, found),
        Ok(_) => json!({ "ok": false, "error": "skipped: a required layer is missing" }),
        Err(_) => json!({ "ok": false, "error": "skipped: no usable interpreter" }),
    };
    let smoke_ok = smoke["ok"] == Value::Bool(true);
    // "Allowed means importable": every module the policy allows must import in the jail.
    let imports = if smoke_ok {
        match warden_gateway::runtime_check::require_importable(&policy) {
            Ok(count) => json!({ "ok": true, "modules": count }),
            Err(err) => json!({ "ok": false, "error": format!("{err:#}") }),
        }
    } else {
        json!({ "ok": false, "error": "skipped: the smoke run failed" })
    };
    let imports_ok = imports["ok"] == Value::Bool(true);
    let report = json!({
        "policy": policy.name,
        "mode": host.mode,
        "layers": layers,
        "cgroup": host.cgroup,
        "interpreter": interpreter_report,
        "smoke_run": smoke,
        "allowed_imports": imports,
        "missing_required_layers": missing.iter().map(|l| l.name()).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{report}");
    } else {
        print_human(&report);
    }
    Ok(ExitCode::from(
        if !missing.is_empty() || !smoke_ok || !imports_ok {
            exit::FAILED
        } else {
            exit::OK
        },
    ))
}

fn smoke_run(
    config: &warden_jail::Config,
    host: &Host,
    interpreter: warden_jail::Interpreter,
) -> Value {
    let plan = match Plan::build(config, host, interpreter) {
        Ok(plan) => plan,
        Err(err) => return json!({ "ok": false, "error": err.to_string() }),
    };
    match warden_jail::run(&plan, "print('ok')\n", None) {
        Ok(outcome) if outcome.status == warden_jail::Status::Ok && outcome.stdout == b"ok\n" => {
            json!({
                "ok": true, "wall_ms": outcome.usage.wall_ms, "layers": outcome.layers
            })
        }
        Ok(outcome) => json!({
            "ok": false,
            "error": format!("status {}: {}", outcome.status.name(), outcome.stderr_text().trim()),
        }),
        Err(err) => json!({ "ok": false, "error": err.to_string() }),
    }
}

fn print_human(report: &Value) {
    println!(
        "warden doctor — policy `{}`, mode {}",
        text(&report["policy"]),
        text(&report["mode"]["kind"])
    );
    if let Value::Array(layers) = &report["layers"] {
        for layer in layers {
            let mark = match (layer["available"].as_bool(), layer["required"].as_bool()) {
                (Some(true), _) => "ok     ",
                (_, Some(true)) => "MISSING",
                _ => "off    ",
            };
            let required = if layer["required"] == Value::Bool(true) {
                " (required)"
            } else {
                ""
            };
            println!(
                "  {mark} {:<11}{required}: {}",
                text(&layer["layer"]),
                text(&layer["detail"])
            );
        }
    }
    let interpreter = &report["interpreter"];
    if interpreter["ok"] == Value::Bool(true) {
        println!(
            "  ok      interpreter: {} → {}",
            text(&interpreter["configured"]),
            text(&interpreter["real"])
        );
    } else {
        println!("  MISSING interpreter: {}", text(&interpreter["error"]));
    }
    let smoke = &report["smoke_run"];
    if smoke["ok"] == Value::Bool(true) {
        println!(
            "  ok      smoke run: print('ok') in the jail took {} ms",
            smoke["wall_ms"]
        );
    } else {
        println!("  FAILED  smoke run: {}", text(&smoke["error"]));
    }
    let imports = &report["allowed_imports"];
    if imports["ok"] == Value::Bool(true) {
        println!(
            "  ok      allowed modules: all {} import in the jail",
            imports["modules"]
        );
    } else {
        println!("  FAILED  allowed modules: {}", text(&imports["error"]));
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
