//! `warden doctor`: which layers this host can enforce, and whether the policy's required ones are there.

use std::process::ExitCode;

use clap::Args;
use serde_json::{json, Value};
use warden_gateway::jail_config;

use super::exit;
use warden_jail::{Host, Layer, Plan};

use super::RulesArg;

/// Report which confinement layers this host can enforce.
///
/// Probes user namespaces, Landlock, seccomp, cgroups (version, controllers, delegation) and the
/// interpreter, then runs a one-line program in the jail. Exit status: 0 when every layer the policy
/// requires is available and the smoke run succeeded, 1 when one is missing, 2 on configuration errors.
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
    let available = |layer: Layer| -> Result<String, String> {
        match layer {
            Layer::Namespaces => host.user_namespaces.clone().map(|()| "user, mount, pid, net, ipc, uts, cgroup".into()),
            Layer::Landlock => host.landlock_abi.map(|abi| format!("abi-{abi}")).ok_or_else(|| {
                "the kernel offers no Landlock ABI (not built in, or missing from the `lsm=` boot list)".into()
            }),
            Layer::Seccomp => {
                if host.seccomp {
                    Ok("filters available".into())
                } else {
                    Err("the kernel does not support seccomp filters".into())
                }
            }
            Layer::Cgroup => match host.cgroup.version {
                Some(version) => Ok(format!(
                    "{} ({}) under {}",
                    version.name(),
                    host.cgroup.controllers.join(", "),
                    host.cgroup.hierarchies.iter().map(|h| h.parent.display().to_string()).collect::<Vec<_>>().join(", ")
                )),
                None => Err(host.cgroup.reason.clone().unwrap_or_else(|| "no usable hierarchy".into())),
            },
            Layer::Rlimits => Ok("always available".into()),
        }
    };
    let mut missing = Vec::new();
    let mut layers = Vec::new();
    for layer in Layer::ALL {
        let required = config.required_layers.contains(&layer);
        let state = available(layer);
        if required && state.is_err() {
            missing.push(layer);
        }
        layers.push(json!({
            "layer": layer.name(),
            "required": required,
            "available": state.is_ok(),
            "detail": match &state { Ok(detail) | Err(detail) => detail },
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
    let report = json!({
        "policy": policy.name,
        "mode": host.mode,
        "layers": layers,
        "cgroup": host.cgroup,
        "interpreter": interpreter_report,
        "smoke_run": smoke,
        "missing_required_layers": missing.iter().map(|l| l.name()).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{report}");
    } else {
        print_human(&report);
    }
    Ok(ExitCode::from(if !missing.is_empty() || !smoke_ok {
        exit::FAILED
    } else {
        exit::OK
    }))
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
}

fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}
