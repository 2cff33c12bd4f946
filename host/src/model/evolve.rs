//! How a live instance's model may change: additions are applied, changes that would lose or
//! reinterpret stored data are refused with a message saying which and why.

use super::{DataModel, GlobalDataDef, PersonField, TableDef, TableField};

/// Which kind of table a change concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    OneToMany,
    GlobalData,
}

/// One schema change to apply to an instance's store.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    AddPersonField(PersonField),
    AddUniqueIndex(String),
    DropUniqueIndex(String),
    AddTable(TableKind, TableDef),
    AddTableField(TableKind, String, TableField),
    AddGlobalData(GlobalDataDef),
}

/// The changes that turn `old` into `new`, or every refusal found.
pub fn plan(old: &DataModel, new: &DataModel) -> Result<Vec<Change>, String> {
    let mut changes = Vec::new();
    let mut refusals = Vec::new();
    for f in &old.person_data {
        match new.person_field(&f.name) {
            None => refusals.push(format!("removing Person Data field {} would lose its data", f.name)),
            Some(n) if n.ty != f.ty => refusals.push(format!(
                "changing Person Data field {} from {} to {} would reinterpret its data",
                f.name,
                f.ty.name(),
                n.ty.name()
            )),
            Some(n) if n.unique && !f.unique => changes.push(Change::AddUniqueIndex(n.name.clone())),
            Some(n) if !n.unique && f.unique => changes.push(Change::DropUniqueIndex(n.name.clone())),
            Some(_) => {}
        }
    }
    for f in &new.person_data {
        if old.person_field(&f.name).is_none() {
            changes.push(Change::AddPersonField(f.clone()));
            if f.unique {
                changes.push(Change::AddUniqueIndex(f.name.clone()));
            }
        }
    }
    for (kind, olds, news) in [
        (TableKind::OneToMany, &old.one_to_many, &new.one_to_many),
        (TableKind::GlobalData, &old.global_data_tables, &new.global_data_tables),
    ] {
        for t in olds {
            match news.iter().find(|n| n.name == t.name) {
                None => refusals.push(format!("removing table {} would lose its records", t.name)),
                Some(n) => plan_table(kind, t, n, &mut changes, &mut refusals),
            }
        }
        for n in news {
            if !olds.iter().any(|t| t.name == n.name) {
                changes.push(Change::AddTable(kind, n.clone()));
            }
        }
    }
    for g in &old.global_data {
        match new.global_data_item(&g.name) {
            None => refusals.push(format!("removing Global Data {} would lose its value", g.name)),
            Some(n) if n.ty != g.ty => refusals.push(format!("changing the type of Global Data {} would reinterpret its value", g.name)),
            Some(_) => {}
        }
    }
    for g in &new.global_data {
        if old.global_data_item(&g.name).is_none() {
            changes.push(Change::AddGlobalData(g.clone()));
        }
    }
    if refusals.is_empty() {
        Ok(changes)
    } else {
        Err(refusals.join("\n"))
    }
}

fn plan_table(kind: TableKind, old: &TableDef, new: &TableDef, changes: &mut Vec<Change>, refusals: &mut Vec<String>) {
    for f in &old.fields {
        match new.field(&f.name) {
            None => refusals.push(format!("removing field {}.{} would lose its data", old.name, f.name)),
            Some(n) if n.ty != f.ty => refusals.push(format!("changing the type of {}.{} would reinterpret its data", old.name, f.name)),
            Some(n) if n.identifier != f.identifier => {
                refusals.push(format!("changing the identifier of table {} is not possible on a live table", old.name))
            }
            Some(_) => {}
        }
    }
    for f in &new.fields {
        if old.field(&f.name).is_none() {
            if f.identifier {
                refusals.push(format!("the identifier of table {} cannot change", old.name));
            } else {
                changes.push(Change::AddTableField(kind, old.name.clone(), f.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DefinitionFile, FieldType, DEMO};

    fn demo() -> DataModel {
        DefinitionFile::from_toml(DEMO).unwrap().model
    }

    #[test]
    fn same_model_needs_nothing() {
        assert_eq!(plan(&demo(), &demo()), Ok(vec![]));
    }

    #[test]
    fn additions_are_planned() {
        let mut new = demo();
        new.person_data.push(PersonField { name: "NICK".into(), ty: FieldType::String, unique: true, description: None });
        new.one_to_many[0].fields.push(TableField { name: "NOTE".into(), ty: FieldType::String, identifier: false, description: None });
        let changes = plan(&demo(), &new).unwrap();
        assert!(matches!(&changes[0], Change::AddPersonField(f) if f.name == "NICK"));
        assert_eq!(changes[1], Change::AddUniqueIndex("NICK".into()));
        assert!(matches!(&changes[2], Change::AddTableField(TableKind::OneToMany, t, f) if t == "PURCHASES" && f.name == "NOTE"));
    }

    #[test]
    fn losses_are_refused() {
        let mut new = demo();
        new.person_data.retain(|f| f.name != "CITY");
        new.person_data.iter_mut().find(|f| f.name == "AGE").unwrap().ty = FieldType::String;
        new.global_data_tables.pop();
        let err = plan(&demo(), &new).unwrap_err();
        assert!(err.contains("removing Person Data field CITY"), "{err}");
        assert!(err.contains("AGE from NUMBER to STRING"), "{err}");
        assert!(err.contains("removing table PRODUCTS"), "{err}");
    }
}
