//! `warden doctor`: which layers this host can enforce, and whether the policy's required ones are there.

use super::out::outln;
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
/// interpreter, then runs a one-line program in the jail, checks the runtime layer (warden's audit
/// hook: its library found, loaded in the jail and holding the policy at a sink), and imports, in
/// the jail, every module the policy allows (allowed means importable). Exit status: 0 when every
/// layer the policy requires is available, the smoke run succeeded, the runtime layer works where
/// the policy wants it and every allowed module imports; 1 otherwise; 2 on configuration errors.
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
    let runtime_layer = if smoke_ok {
        runtime_layer(&policy)
    } else {
        json!({ "ok": false, "error": "skipped: the smoke run failed" })
    };
    let runtime_ok = runtime_layer["ok"] == Value::Bool(true);
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
        "runtime_layer": runtime_layer,
        "allowed_imports": imports,
        "missing_required_layers": missing.iter().map(|l| l.name()).collect::<Vec<_>>(),
    });
    if args.json {
        outln!("{report}");
    } else {
        print_human(&report);
    }
    Ok(ExitCode::from(
        if !missing.is_empty() || !smoke_ok || !runtime_ok || !imports_ok {
            exit::FAILED
        } else {
            exit::OK
        },
    ))
}

/// The runtime layer as a run gets it: the hook library found beside warden, then a program run
/// through the whole pipeline (static layer off, so only the hook can stop it) that calls a sink
/// the policy closes — a process start, or else an import it denies. `ok` when the hook is in
/// force and stopped it; when the policy turns the hook off, `ok` says only that runs agree.
fn runtime_layer(policy: &warden_policy::Policy) -> Value {
    use warden_gateway::pipeline::{self, RunRequest, RunStatus};
    let wanted = policy.hooks.name();
    let library = match warden_gateway::hook_config::find_library() {
        Ok(path) => path.display().to_string(),
        Err(looked) if policy.hooks == warden_policy::settings::Hooks::Off => {
            let _ = looked;
            return json!({ "ok": true, "hooks": wanted, "in_force": false,
                           "detail": "the policy turns the runtime layer off ([runtime] hooks = \"off\")" });
        }
        Err(looked) => {
            let looked: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
            return json!({ "ok": policy.hooks != warden_policy::settings::Hooks::Required, "hooks": wanted,
                           "in_force": false,
                           "error": format!("warden's hook library was not found (looked for {})", looked.join(", ")) });
        }
    };
    // A sink the policy closes, reached without a name the static layer would need to see.
    let probe = if !policy.processes {
        "import os\nos.system('true')\n"
    } else {
        "__import__('_xxsubinterpreters')\n"
    };
    let request = RunRequest {
        source: probe.as_bytes().to_vec(),
        no_policy: true,
        ..RunRequest::default()
    };
    let record = match pipeline::execute(policy, &request) {
        Ok(record) => record,
        Err(err) => {
            return json!({ "ok": false, "hooks": wanted, "library": library, "error": format!("{err:#}") })
        }
    };
    let in_force = record
        .layers
        .as_ref()
        .is_some_and(|layers| layers.runtime_hooks);
    let stopped = record
        .stopped_by
        .as_ref()
        .filter(|s| s.layer == warden_gateway::stopped_by::Depth::Runtime)
        .map(|s| {
            format!(
                "{} on {}",
                s.rule.as_deref().unwrap_or("?"),
                s.event.as_deref().unwrap_or("?")
            )
        });
    match (policy.hooks, in_force, stopped) {
        (warden_policy::settings::Hooks::Off, false, _) => {
            json!({ "ok": true, "hooks": wanted, "in_force": false, "library": library,
            "detail": "the policy turns the runtime layer off ([runtime] hooks = \"off\")" })
        }
        (_, true, Some(stopped)) => {
            json!({ "ok": true, "hooks": wanted, "in_force": true, "library": library,
            "probe": stopped, "wall_ms": record.usage.wall_ms })
        }
        (_, in_force, _) if record.status == RunStatus::SetupFailed => {
            json!({ "ok": false, "hooks": wanted,
            "in_force": in_force, "library": library,
            "error": record.message.unwrap_or_else(|| "the jail could not start".into()) })
        }
        (_, in_force, _) => {
            json!({ "ok": false, "hooks": wanted, "in_force": in_force, "library": library,
            "error": format!("the probe was not stopped by the runtime layer (status {}{})",
                record.status.as_str(),
                record.error.map(|e| format!(", {}: {}", e.name, e.value)).unwrap_or_default()) })
        }
    }
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
    outln!(
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
            outln!(
                "  {mark} {:<11}{required}: {}",
                text(&layer["layer"]),
                text(&layer["detail"])
            );
        }
    }
    let interpreter = &report["interpreter"];
    if interpreter["ok"] == Value::Bool(true) {
        outln!(
            "  ok      interpreter: {} → {}",
            text(&interpreter["configured"]),
            text(&interpreter["real"])
        );
    } else {
        outln!("  MISSING interpreter: {}", text(&interpreter["error"]));
    }
    let smoke = &report["smoke_run"];
    if smoke["ok"] == Value::Bool(true) {
        outln!(
            "  ok      smoke run: print('ok') in the jail took {} ms",
            smoke["wall_ms"]
        );
    } else {
        outln!("  FAILED  smoke run: {}", text(&smoke["error"]));
    }
    let runtime = &report["runtime_layer"];
    match (runtime["ok"].as_bool(), runtime["in_force"].as_bool()) {
        (Some(true), Some(true)) => outln!(
            "  ok      runtime layer: warden's audit hook ({}) loads in the jail and stopped {}",
            text(&runtime["library"]),
            text(&runtime["probe"])
        ),
        (Some(true), _) => outln!(
            "  off     runtime layer: {}",
            text(&runtime["detail"]).replace("null", "not found; the policy does not require it")
        ),
        _ => outln!("  FAILED  runtime layer: {}", text(&runtime["error"])),
    }
    let imports = &report["allowed_imports"];
    if imports["ok"] == Value::Bool(true) {
        outln!(
            "  ok      allowed modules: all {} import in the jail",
            imports["modules"]
        );
    } else {
        outln!("  FAILED  allowed modules: {}", text(&imports["error"]));
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
