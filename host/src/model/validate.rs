//! Validation of a data model and of instance settings. Every problem is reported at once, so an
//! operator fixes a definition file in one pass.

use std::collections::HashSet;

use super::{FieldType, InstanceSettings, Model};
use crate::rsql;

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') && name.len() <= 63
}

/// A customer id is used in URLs and as a directory name: lower-case letters, digits and `-`.
pub fn validate_customer_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 63
        && id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !id.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!("customer_id '{id}' must be 1 to 63 characters of a-z, 0-9 and '-', not starting with '-'"))
    }
}

pub fn validate_settings(settings: &InstanceSettings) -> Result<(), String> {
    validate_customer_id(&settings.customer_id)?;
    if settings.environment == super::Environment::Production && settings.licensed_uar.is_none() && settings.daily_cap.is_none() {
        return Err(format!(
            "production instance '{}' needs licensed_uar (its daily cap is 5 x licensed_uar) or daily_cap",
            settings.customer_id
        ));
    }
    if let Some(weight) = settings.cpu_weight.filter(|w| !(1..=super::definition::MAX_CPU_WEIGHT).contains(w)) {
        return Err(format!(
            "instance '{}': cpu_weight {weight} is out of range; it is a weight from 1 to {} (100 when unset)",
            settings.customer_id,
            super::definition::MAX_CPU_WEIGHT
        ));
    }
    Ok(())
}

fn check_names<'a>(kind: &str, names: impl Iterator<Item = &'a str>, problems: &mut Vec<String>) {
    let mut seen = HashSet::new();
    for name in names {
        if !valid_name(name) {
            problems.push(format!("{kind} name '{name}' must start with a letter and hold only letters, digits and '_' (at most 63)"));
        }
        // SQL identifiers are case-insensitive in SQLite, so names must differ beyond case.
        if !seen.insert(name.to_ascii_lowercase()) {
            problems.push(format!("{kind} '{name}' is defined twice (names are compared ignoring case)"));
        }
    }
}

pub(super) fn problems(model: &Model) -> Vec<String> {
    let def = &model.def;
    let mut problems = Vec::new();
    check_names("Person Data field", def.person_data.iter().map(|f| f.name.as_str()), &mut problems);
    match def.person_field(&def.recipient_id) {
        None => problems.push(format!("recipient_id '{}' is not a Person Data field", def.recipient_id)),
        Some(f) => {
            if !f.unique {
                problems.push(format!("the Recipient Id field {} must be unique", f.name));
            }
            if !matches!(f.ty, FieldType::Number | FieldType::String) {
                problems.push(format!("the Recipient Id field {} must be NUMBER or STRING", f.name));
            }
        }
    }
    for f in def.person_data.iter().filter(|f| f.unique) {
        if !matches!(f.ty, FieldType::Number | FieldType::String) {
            problems.push(format!("unique field {} must be NUMBER or STRING", f.name));
        }
    }
    for (kind, tables) in [("One-To-Many table", &def.one_to_many), ("Global Data Table", &def.global_data_tables)] {
        check_names(kind, tables.iter().map(|t| t.name.as_str()), &mut problems);
        for t in tables {
            check_names(&format!("field of {}", t.name), t.fields.iter().map(|f| f.name.as_str()), &mut problems);
            let ids: Vec<_> = t.fields.iter().filter(|f| f.identifier).collect();
            match ids.as_slice() {
                [id] if matches!(id.ty, FieldType::String | FieldType::Number) => {}
                [id] => problems.push(format!("identifier {}.{} must be STRING or NUMBER", t.name, id.name)),
                _ => problems.push(format!("{kind} {} needs exactly one identifier field", t.name)),
            }
        }
    }
    check_names("Global Data", def.global_data.iter().map(|g| g.name.as_str()), &mut problems);
    for g in &def.global_data {
        if let Some(v) = &g.value {
            if let Err(e) = super::fields::typed(g.ty, super::fields::Given::Text(v), &model.formats) {
                problems.push(format!("Global Data {} value: {e}", g.name));
            }
        }
    }
    check_names("event", def.events.iter().map(|e| e.name.as_str()), &mut problems);
    for (kind, list) in [("target group", &def.target_groups), ("promotion", &def.promotions)] {
        check_names(kind, list.iter().map(|g| g.name.as_str()), &mut problems);
        for g in list.iter().filter(|g| !g.filter.trim().is_empty()) {
            let checked = rsql::compile_text(&g.filter, def, &model.formats, rsql::Dialect::Sqlite).map(|_| ()).map_err(|e| match e {
                rsql::FilterError::UnknownSelector(s) => format!("unknown Person Data field {s}"),
                rsql::FilterError::Invalid(m) => m,
            });
            if let Err(e) = checked {
                problems.push(format!("{kind} {} filter '{}': {e}", g.name, g.filter));
            }
        }
    }
    for name in &def.register.fields {
        if def.person_field(name).is_none() {
            problems.push(format!("register field {name} is not a Person Data field"));
        }
    }
    check_names("flow", def.flows.iter().map(|f| f.name.as_str()), &mut problems);
    for flow in &def.flows {
        problems.extend(super::flow::problems(flow, model).into_iter().map(|p| format!("flow {}: {p}", flow.name)));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::super::{DefinitionFile, Model, DEMO};

    #[test]
    fn the_demo_definition_is_valid() {
        let file = DefinitionFile::from_toml(DEMO).unwrap();
        assert_eq!(file.instances.len(), 2);
        Model::new(file.model).unwrap();
    }

    #[test]
    fn problems_are_all_reported() {
        let mut file = DefinitionFile::from_toml(DEMO).unwrap();
        file.model.recipient_id = "CITY".into();
        file.model.person_data.push(file.model.person_data[1].clone());
        file.model.target_groups[0].filter = "NOPE==1".into();
        file.model.one_to_many[0].fields[0].identifier = false;
        let err = Model::new(file.model).unwrap_err();
        assert!(err.contains("must be unique"), "{err}");
        assert!(err.contains("defined twice"), "{err}");
        assert!(err.contains("unknown Person Data field NOPE"), "{err}");
        assert!(err.contains("exactly one identifier"), "{err}");
    }

    #[test]
    fn flows_of_the_definition_are_checked_with_the_model() {
        let mut file = DefinitionFile::from_toml(DEMO).unwrap();
        assert_eq!(file.model.flows[0].name, "WELCOME_MAIL");
        let mut broken = file.model.flows[0].clone();
        broken.name = "BROKEN".into();
        broken.trigger.event = Some("NOPE".into());
        file.model.flows.push(broken.clone());
        broken.name = "broken".into();
        file.model.flows.push(broken);
        let err = Model::new(file.model).unwrap_err();
        assert!(err.contains("flow BROKEN: trigger: unknown event 'NOPE'"), "{err}");
        assert!(err.contains("flow 'broken' is defined twice"), "{err}");
    }
}
