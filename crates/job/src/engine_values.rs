//! The typed values of engine-private options a job set, carried in `JobOptions::engine`
//! and read by each engine's `from_values` (see [`crate::engine_options!`]).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// Typed values of the engine-private options a job set (last one wins).
#[derive(Clone, Default)]
pub struct EngineValues(Vec<(&'static str, Arc<dyn Any + Send + Sync>)>);

impl EngineValues {
    /// Set option `name` to `value`.
    pub fn set<T: Any + Send + Sync>(&mut self, name: &'static str, value: T) {
        let v: Arc<dyn Any + Send + Sync> = Arc::new(value);
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v,
            None => self.0.push((name, v)),
        }
    }

    /// The value of option `name`, if the job set it with a value of type `T`. (Rows of
    /// the same name in several engines have the same type; the registry's tests check it.)
    pub fn get<T: Any>(&self, name: &str) -> Option<&T> {
        self.0
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.downcast_ref::<T>())
    }

    /// Names of the options set.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().map(|(n, _)| *n)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for EngineValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
