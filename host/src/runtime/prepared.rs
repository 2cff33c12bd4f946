//! A compiled extension version as every call gets it: shared behind one reference count.

use std::sync::Arc;

use wasmtime::component::InstancePre;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

use super::{CallState, ExtensionConfig};

/// A compiled extension version, ready to instantiate: its imports resolved once, and for an
/// http extension the wasi:http proxy's exports looked up once too (the hot path). Cloned out of
/// the caches at every call: one shared count, where its parts (the component, its imports,
/// the proxy's, the configuration...) are nine, each written from every core at every call.
#[derive(Clone)]
pub struct Prepared(Arc<PreparedComponent>);

impl std::ops::Deref for Prepared {
    type Target = PreparedComponent;

    fn deref(&self) -> &PreparedComponent {
        &self.0
    }
}

/// What a [`Prepared`] shares.
pub struct PreparedComponent {
    pub config: Arc<ExtensionConfig>,
    pub(crate) instance: InstancePre<CallState>,
    pub(crate) http: Option<ProxyPre<CallState>>,
    /// The content hash of this version: reused instances (`warm.rs`) serve one version only.
    pub(crate) version: Arc<str>,
    /// The typed pre-instantiation of a step, condition, monitor or authheader (its world's
    /// exports looked up once per version, as `http` is), made at its first call.
    typed: std::sync::OnceLock<Arc<dyn std::any::Any + Send + Sync>>,
}

impl Prepared {
    /// `instance` of the component whose content hash is `sha256`, with its configuration and,
    /// for an http extension, its proxy's pre-instantiation.
    pub(super) fn new(
        config: ExtensionConfig,
        instance: InstancePre<CallState>,
        http: Option<ProxyPre<CallState>>,
        sha256: &str,
    ) -> Prepared {
        Prepared(Arc::new(PreparedComponent {
            config: Arc::new(config),
            instance,
            http,
            version: Arc::from(sha256),
            typed: Default::default(),
        }))
    }

    /// The kind's typed pre-instantiation `P`, made by `make` at the version's first call and
    /// kept with it (a sweep calls a step once per recipient: the lookups are done once).
    pub(crate) fn typed<P: Clone + Send + Sync + 'static>(
        &self,
        make: impl FnOnce(InstancePre<CallState>) -> wasmtime::Result<P>,
    ) -> wasmtime::Result<P> {
        if let Some(made) = self.typed.get().and_then(|p| p.downcast_ref::<P>()) {
            return Ok(made.clone());
        }
        let made = make(self.instance.clone())?;
        let _ = self.typed.set(Arc::new(made.clone()));
        Ok(made)
    }
}
