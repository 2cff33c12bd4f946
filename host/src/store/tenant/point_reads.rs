//! The statements of point reads (one recipient by a unique field, or by key), built once per
//! model. A read built its `SELECT` each time: every Person Data field's column quoted and
//! joined, then, on PostgreSQL, its placeholders numbered; about 2 us of CPU of a read that costs
//! 40 to 55 in all (issue 41, `bench/profile.sh read`).

use std::sync::{Arc, PoisonError, RwLock};

use crate::model::{Model, ModelId};

/// The texts kept for the last model a read came with. An instance's store is read with one
/// model at a time (a changed model reopens the instance), so one entry is enough; a read with
/// another model builds that model's texts and keeps them instead.
#[derive(Debug, Default)]
pub(super) struct PointReads {
    built: RwLock<Option<(ModelId, Texts)>>,
}

/// One text a Person Data field, then one by key.
type Texts = Arc<[Box<str>]>;

impl PointReads {
    /// `model`'s texts: one a Person Data field (a read by that field), then one by key; `build`
    /// makes them the first time.
    pub(super) fn texts(&self, model: &Model, build: impl FnOnce() -> Vec<Box<str>>) -> Texts {
        if let Some((id, texts)) = &*self.built.read().unwrap_or_else(PoisonError::into_inner) {
            if *id == model.id {
                return Arc::clone(texts);
            }
        }
        let texts: Texts = build().into();
        *self.built.write().unwrap_or_else(PoisonError::into_inner) = Some((model.id, Arc::clone(&texts)));
        texts
    }
}

#[cfg(test)]
mod tests {
    use super::PointReads;

    #[test]
    fn built_once_for_a_model_and_again_for_another() {
        let reads = PointReads::default();
        let model = crate::fuzz::demo_model();
        let mut builds = 0;
        for _ in 0..3 {
            let texts = reads.texts(&model, || {
                builds += 1;
                vec!["first".into()]
            });
            assert_eq!(&*texts[0], "first");
        }
        assert_eq!(builds, 1);
        let clone = model.clone();
        assert_eq!(&*reads.texts(&clone, || vec!["not built".into()])[0], "first", "a clone is the same model");
        let changed = crate::fuzz::demo_model();
        assert_eq!(&*reads.texts(&changed, || vec!["second".into()])[0], "second", "another model gets its own texts");
        assert_eq!(&*reads.texts(&model, || vec!["third".into()])[0], "third", "only the last model's are kept");
    }
}
