//! The rules file's JSON Schema (`rules/schema.json`): generated from the code, current, a valid
//! draft 2020-12 schema, satisfied by the shipped rules files, and as strict as the rules about
//! `[actions]`.
//!
//! `WARDEN_BLESS=1 cargo test -p warden-policy --test schema` rewrites `rules/schema.json`.

use std::path::PathBuf;

use serde_json::{json, Value};
use warden_policy::{settings::json_schema, Policy, Rule};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&json_schema()).unwrap_or_else(|err| panic!("{err}"))
}

/// A rules file as the JSON the schema judges (TOML has no value JSON lacks but datetimes, which
/// rules files do not use).
fn as_json(toml_text: &str) -> Value {
    let table: toml::Table = toml::from_str(toml_text).unwrap_or_else(|err| panic!("{err}"));
    serde_json::to_value(table).unwrap_or_else(|err| panic!("{err}"))
}

fn schema_errors(toml_text: &str) -> Vec<String> {
    validator()
        .iter_errors(&as_json(toml_text))
        .map(|err| format!("{}: {err}", err.instance_path()))
        .collect()
}

#[test]
fn the_checked_in_schema_is_the_generated_one() {
    let path = repo().join("rules/schema.json");
    let generated = json_schema();
    if std::env::var_os("WARDEN_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&generated).unwrap_or_default() + "\n";
        std::fs::write(&path, text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    }
    let checked_in: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display())),
    )
    .unwrap_or_else(|err| panic!("{err}"));
    assert!(
        generated == checked_in,
        "rules/schema.json is stale: regenerate with `warden rules schema > rules/schema.json` \
         (or WARDEN_BLESS=1 cargo test -p warden-policy --test schema)"
    );
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let schema = json_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    if let Err(err) = jsonschema::meta::validate(&schema) {
        panic!("{err}");
    }
}

#[test]
fn the_shipped_rules_files_satisfy_the_schema() {
    for name in ["default.toml", "strict.toml"] {
        let path = repo().join("rules").join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let errors = schema_errors(&text);
        assert!(errors.is_empty(), "{name}: {errors:#?}");
    }
}

#[test]
fn the_schema_refuses_what_the_rules_refuse_in_actions() {
    let refused = [
        // No such rule.
        "[actions]\nXYZ999 = \"deny\"\n",
        // A family is not a key.
        "[actions]\nimports = \"warn\"\n",
        // No such action.
        "[actions]\nDYN401 = \"allow\"\n",
        "[actions]\ndynamic-code = \"ignore\"\n",
        // Source rules only deny.
        "[actions]\nSYN001 = \"warn\"\n",
        "[actions]\nsyn002 = \"off\"\n",
        "[actions]\nsyntax-error = \"review\"\n",
        // A rule's name is matched exactly.
        "[actions]\nDynamic-Code = \"warn\"\n",
    ];
    for text in refused {
        assert!(!schema_errors(text).is_empty(), "schema accepted:\n{text}");
        assert!(
            Policy::from_toml(text, None).is_err(),
            "rules accepted:\n{text}"
        );
    }
}

#[test]
fn the_schema_accepts_what_the_rules_accept_in_actions() {
    let mut accepted = vec![
        "[actions]\nSYN001 = \"deny\"\nsyntax-error = \"deny\"\n".to_owned(),
        // Ids in any case, as the rules file reads them.
        "[actions]\ndyn401 = \"warn\"\nAtTr301 = \"review\"\n".to_owned(),
    ];
    for rule in Rule::ALL.iter().filter(|rule| !rule.is_source_rule()) {
        for action in ["deny", "review", "warn", "off"] {
            accepted.push(format!("[actions]\n{} = \"{action}\"\n", rule.id()));
            accepted.push(format!("[actions]\n{} = \"{action}\"\n", rule.name()));
        }
    }
    for text in &accepted {
        let errors = schema_errors(text);
        assert!(errors.is_empty(), "schema refused:\n{text}{errors:#?}");
        if let Err(err) = Policy::from_toml(&format!("extends = \"default\"\n{text}"), None) {
            panic!("rules refused:\n{text}{err}");
        }
    }
}

#[test]
fn other_keys_are_checked_by_name_and_value() {
    for text in [
        "[imports]\nalow = [\"numpy\"]\n",
        "[runtime]\nhooks = \"maybe\"\n",
        "[limits]\nmemory_enforcement = \"lenient\"\n",
        "[jail]\nrequired = [\"apparmor\"]\n",
        "[remove.jail]\nrequired = [\"selinux\"]\n",
        "[files]\ndynamic_path = \"allow\"\n",
        "[limits]\nwall_time_ms = \"ten seconds\"\n",
    ] {
        assert!(!schema_errors(text).is_empty(), "schema accepted:\n{text}");
    }
    let errors = schema_errors("[output.schema]\ntype = \"object\"\n[policy]\nname = \"x\"\n");
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        as_json("[policy]\nname = \"x\"\n"),
        json!({"policy": {"name": "x"}})
    );
}
