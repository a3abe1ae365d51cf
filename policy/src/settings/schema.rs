//! The JSON Schema of the rules file (`warden rules schema`, `rules/schema.json`), for editors and CI.
//!
//! Generated from the serde structures of `raw.rs` at draft 2020-12. What serde cannot say is filled
//! in here from the tables that decide it: the rule ids and names `[actions]` accepts and the actions
//! each may take, the layers, the runtime layer's and memory enforcement's modes. TOML has no null,
//! so an optional key is described by its type alone (absent is how a file leaves it unset).
//!
//! The schema only mirrors the rules: `Policy::from_raw` is what accepts or refuses a file, and a test
//! checks that the shipped rules files satisfy this schema.

use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use super::raw::RawRules;
use super::{Hooks, Layer, MemoryEnforcement, ResultFrom};
use crate::finding::Action;
use crate::rules::Rule;

/// The JSON Schema of the rules file.
pub fn json_schema() -> Value {
    SchemaSettings::draft2020_12()
        .with_transform(ForToml)
        .into_generator()
        .into_root_schema_for::<RawRules>()
        .to_value()
}

/// `[actions]`: every rule by id or name, each to an action it may take. Source rules (SYN*) only
/// deny. Ids are matched in any case, as the rules file reads them; names exactly.
pub(super) fn actions(generator: &mut SchemaGenerator) -> Schema {
    let action = action(generator);
    let source_action = json!({"const": "deny", "description": "source rules (SYN*) always deny"});
    let mut properties = Map::new();
    for &rule in Rule::ALL {
        let value = if rule.is_source_rule() {
            &source_action
        } else {
            action.as_value()
        };
        let about = format!(
            "{} rule, severity {}, default {}",
            rule.family(),
            rule.severity().as_str(),
            rule.default_action().as_str()
        );
        properties.insert(
            rule.id().to_owned(),
            described(value, &format!("{}: {about}", rule.name())),
        );
        properties.insert(
            rule.name().to_owned(),
            described(value, &format!("{}: {about}", rule.id())),
        );
    }
    let (source, others): (Vec<Rule>, Vec<Rule>) =
        Rule::ALL.iter().partition(|rule| rule.is_source_rule());
    let mut patterns = Map::new();
    patterns.insert(ids_in_any_case(&source), source_action.clone());
    patterns.insert(ids_in_any_case(&others), action.to_value());
    schema(json!({
        "type": "object",
        "properties": properties,
        "patternProperties": patterns,
        "additionalProperties": false,
    }))
}

/// An action a rule may take (`deny`, `review`, `warn`, `off`), kept once in the definitions.
pub(super) fn action(generator: &mut SchemaGenerator) -> Schema {
    let name = "action";
    let values: Vec<&str> = [Action::Deny, Action::Review, Action::Warn]
        .iter()
        .map(|action| action.as_str())
        .chain(["off"])
        .collect();
    generator.definitions_mut().insert(
        name.to_owned(),
        json!({
            "description": "What a finding of the rule does: `deny` (the program does not run), `review` (it runs once a person approves it), `warn` (reported; it runs) or `off` (not reported).",
            "enum": values,
        }),
    );
    let path = generator.settings().definitions_path.clone();
    Schema::new_ref(format!("#{path}/{name}"))
}

/// `[runtime] hooks`.
pub(super) fn hooks(_: &mut SchemaGenerator) -> Schema {
    let names = [Hooks::Required, Hooks::On, Hooks::Off].map(Hooks::name);
    schema(json!({"enum": names}))
}

/// `[limits] memory_enforcement`.
pub(super) fn memory_enforcement(_: &mut SchemaGenerator) -> Schema {
    let names = [MemoryEnforcement::Strict, MemoryEnforcement::BestEffort].map(|m| m.name());
    schema(json!({"enum": names}))
}

/// `[jail] required` and `[remove.jail] required`: a list of layers.
pub(super) fn layers(_: &mut SchemaGenerator) -> Schema {
    let names = Layer::ALL.map(Layer::name);
    schema(json!({"type": "array", "items": {"enum": names}}))
}

/// `[output] result`: where the result is read from.
pub(super) fn output_result(_: &mut SchemaGenerator) -> Schema {
    let names = ResultFrom::ALL.map(ResultFrom::name);
    schema(json!({"enum": names}))
}

/// `[output] schema`: a JSON Schema, written as a TOML table.
pub(super) fn output_schema(_: &mut SchemaGenerator) -> Schema {
    schema(json!({"type": "object"}))
}

/// Joins the lines of each paragraph with a space; paragraphs stay apart.
fn unwrap_lines(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| {
            paragraph
                .split('\n')
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn schema(value: Value) -> Schema {
    Schema::try_from(value).unwrap_or_default()
}

fn described(value: &Value, description: &str) -> Value {
    let mut value = value.clone();
    if let Some(object) = value.as_object_mut() {
        object.insert("description".to_owned(), description.into());
    }
    value
}

/// A pattern matching any of `rules`' ids whatever the case of their letters (`[Ss][Yy][Nn]001`):
/// ECMA-262 patterns have no case-insensitive flag.
fn ids_in_any_case(rules: &[Rule]) -> String {
    let ids: Vec<String> = rules
        .iter()
        .map(|rule| {
            rule.id()
                .chars()
                .map(|c| match c {
                    'A'..='Z' => format!("[{c}{}]", c.to_ascii_lowercase()),
                    _ => c.to_string(),
                })
                .collect()
        })
        .collect();
    format!("^(?:{})$", ids.join("|"))
}

/// Fits the schema to a TOML file: no `null` (TOML cannot write it, so `Option<T>` is just `T`), no
/// default that is a whole table (every key absent says nothing a reader needs), and descriptions
/// as running text (the doc comments' line breaks are only where the source wrapped).
#[derive(Debug, Clone, Copy)]
struct ForToml;

impl Transform for ForToml {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            if let Some(Value::String(text)) = object.get_mut("description") {
                *text = unwrap_lines(text);
            }
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|kind| kind != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    object.insert("type".to_owned(), only);
                }
            }
            if matches!(object.get("default"), Some(Value::Null | Value::Object(_))) {
                object.remove("default");
            }
            if let Some(Value::Array(any_of)) = object.get_mut("anyOf") {
                any_of.retain(|option| option.get("type").is_none_or(|kind| kind != "null"));
                if let [Value::Object(only)] = any_of.as_slice() {
                    let only = only.clone();
                    object.remove("anyOf");
                    for (key, value) in only {
                        object.entry(key).or_insert(value);
                    }
                }
            }
        }
        transform_subschemas(self, schema);
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    fn find<'a>(schema: &'a Value, pointer: &str) -> &'a Value {
        schema
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{pointer} missing from {schema:#}"))
    }

    #[test]
    fn the_schema_is_draft_2020_12_without_internal_names() {
        let schema = json_schema();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        let text = schema.to_string();
        assert!(!text.contains("Raw"), "{schema:#}");
        assert!(!text.contains("null"), "{schema:#}");
        assert!(schema.get("definitions").is_none());
        find(&schema, "/$defs/imports");
        find(&schema, "/$defs/remove.jail");
    }

    #[test]
    fn action_keys_are_the_rules_ids_and_names() {
        let schema = json_schema();
        let actions = find(&schema, "/properties/actions");
        assert_eq!(actions["additionalProperties"], false);
        let properties = actions["properties"].as_object().expect("properties");
        assert_eq!(properties.len(), Rule::ALL.len() * 2);
        for rule in Rule::ALL {
            assert!(properties.contains_key(rule.id()), "{rule}");
            assert!(properties.contains_key(rule.name()), "{rule}");
        }
        assert_eq!(properties["SYN001"]["const"], "deny");
        assert_eq!(properties["DYN401"]["$ref"], "#/$defs/action");
        assert_eq!(
            find(&schema, "/$defs/action/enum"),
            &json!(["deny", "review", "warn", "off"])
        );
    }

    #[test]
    fn wrapped_lines_become_running_text() {
        assert_eq!(unwrap_lines("one\ntwo\n\nthree"), "one two\n\nthree");
        let schema = json_schema();
        let hooks = find(&schema, "/$defs/runtime/properties/hooks/description");
        assert!(!hooks.as_str().unwrap_or("\n").contains('\n'), "{hooks}");
    }

    #[test]
    fn ids_match_in_any_case() {
        let pattern = ids_in_any_case(&[Rule::DunderAttribute, Rule::SyntaxError]);
        assert_eq!(pattern, "^(?:[Aa][Tt][Tt][Rr]301|[Ss][Yy][Nn]001)$");
    }

    #[test]
    fn every_enumerated_value_is_accepted_by_the_rules() {
        let schema = json_schema();
        let values = |pointer: &str| -> Vec<String> {
            find(&schema, pointer)
                .as_array()
                .expect("enum")
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let mut files = Vec::new();
        for action in values("/$defs/action/enum") {
            files.push(format!("[actions]\nDYN401 = \"{action}\"\n"));
            files.push(format!("[files]\ndynamic_path = \"{action}\"\n"));
        }
        for mode in values("/$defs/runtime/properties/hooks/enum") {
            files.push(format!("[runtime]\nhooks = \"{mode}\"\n"));
        }
        for mode in values("/$defs/limits/properties/memory_enforcement/enum") {
            files.push(format!("[limits]\nmemory_enforcement = \"{mode}\"\n"));
        }
        for layer in values("/$defs/jail/properties/required/items/enum") {
            files.push(format!("[jail]\nrequired = [\"{layer}\"]\n"));
        }
        assert!(files.len() > 10);
        for file in files {
            let text = format!("extends = \"default\"\n{file}");
            if let Err(err) = crate::Policy::from_toml(&text, None) {
                panic!("{text}: {err}");
            }
        }
    }
}
