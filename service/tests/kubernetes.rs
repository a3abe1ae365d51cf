//! deploy/kubernetes/: the serve.toml its ConfigMap holds is a configuration warden accepts, and the
//! DaemonSet agrees with it (the arguments, the port, the grace period, the node in session ids).
//! The manifests' Kubernetes schemas are checked by scripts/k8s-validate.sh.

use std::path::PathBuf;
use std::time::Duration;

use warden_service::config::{AuditTarget, Overrides, ServerConfig};

fn manifest(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy/kubernetes")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The block scalar `serve.toml: |` of the ConfigMap, without its indentation.
fn serve_toml() -> String {
    let configmap = manifest("02-configmap.yaml");
    let (_, block) = configmap
        .split_once("  serve.toml: |\n")
        .unwrap_or_else(|| panic!("no serve.toml in the ConfigMap"));
    let mut text = String::new();
    for line in block.lines() {
        if line.is_empty() {
            text.push('\n');
        } else if let Some(line) = line.strip_prefix("    ") {
            text.push_str(line);
            text.push('\n');
        } else {
            break;
        }
    }
    text
}

/// What the DaemonSet's container runs `warden` with.
fn daemonset_args() -> Vec<String> {
    let daemonset = manifest("03-daemonset.yaml");
    let line = daemonset
        .lines()
        .find_map(|line| line.trim().strip_prefix("args: "))
        .unwrap_or_else(|| panic!("no args in the DaemonSet"));
    serde_json::from_str(line).unwrap_or_else(|err| panic!("args {line}: {err}"))
}

#[test]
fn the_configmap_holds_a_configuration_warden_accepts() {
    let text = serve_toml();
    assert!(text.contains("[server]"), "{text}");
    let args = daemonset_args();
    assert_eq!(args[..3], ["serve", "--config", "/etc/warden/serve.toml"]);
    let overrides = Overrides {
        no_socket: args.iter().any(|arg| arg == "--no-socket"),
        ..Overrides::default()
    };
    let config =
        ServerConfig::parse(&text, None, &overrides).unwrap_or_else(|err| panic!("{err:#}"));
    assert_eq!(config.socket, None, "TCP only in a pod");
    let tcp = config.tcp.unwrap_or_else(|| panic!("no TCP listener"));
    assert!(
        tcp.ip().is_unspecified(),
        "{tcp}: the Service reaches the pod's address"
    );
    assert!(matches!(config.audit, AuditTarget::Stderr));
    assert!(!config.tokens.is_empty());
    assert!(config.policies.contains_key("default"));

    let daemonset = manifest("03-daemonset.yaml");
    assert!(
        daemonset.contains(&format!("containerPort: {}", tcp.port())),
        "the container's port is the listener's"
    );
    let grace: u64 = daemonset
        .lines()
        .find_map(|line| line.trim().strip_prefix("terminationGracePeriodSeconds: "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no terminationGracePeriodSeconds"));
    assert!(
        Duration::from_secs(grace) > config.shutdown_grace,
        "Kubernetes must wait longer than warden drains ({grace} s)"
    );
    assert!(
        daemonset.contains("- name: WARDEN_NODE") && daemonset.contains("fieldPath: spec.nodeName"),
        "session ids name the node"
    );
}

#[test]
fn a_mistyped_key_in_the_configmap_would_be_refused() {
    let text = serve_toml().replace("max_sessions = ", "max_sesions = ");
    assert!(ServerConfig::parse(&text, None, &Overrides::default()).is_err());
}
