//! How a write is recorded in `managedFields` when the Store runs it (kube's
//! `FieldManager.UpdateNoErrors` around the strategy, `handlers/{create,update,patch}.go`).

use serde_json::Value;
use std::sync::Arc;

/// The field manager's update (`FieldManager.UpdateNoErrors`) for a write by `manager`, run
/// on the strategy's output. kube runs it on the decoded object, whose defaults its decoder
/// already set; plugins default in PrepareForCreate/PrepareForUpdate, so running it after them
/// gives the same ownership: the writer owns what it sent and the defaults and canonical form
/// its request produced, never `status` through the main resource (reset fields).
#[derive(Clone)]
pub(super) enum Tracking {
    /// Recorded under `manager`.
    Manager {
        field_manager: Arc<crate::fieldmanager::FieldManager>,
        manager: String,
        subresource: &'static str,
    },
    /// Written without `managedFields`: the retry of a write the storage found too large.
    Strip,
}

impl Tracking {
    /// Before the strategy: the entries the write starts from (`decodeLiveOrNew`), with a
    /// reset or unreadable request value taken off `object`.
    pub(super) fn prepare(
        &self,
        live: &Value,
        object: &mut Value,
    ) -> crate::fieldmanager::managed_fields::Managed {
        match self {
            Tracking::Manager {
                field_manager,
                subresource,
                ..
            } => field_manager.prepare_update(live, object, subresource),
            Tracking::Strip => Default::default(),
        }
    }

    /// After the strategy: `object` with its managed fields after the write from `live`
    /// (`Null` on create).
    pub(super) fn finish(
        &self,
        live: &Value,
        mut object: Value,
        managed: crate::fieldmanager::managed_fields::Managed,
    ) -> Value {
        match self {
            Tracking::Manager {
                field_manager,
                manager,
                subresource,
            } => field_manager.finish_update(live, object, managed, manager, subresource),
            Tracking::Strip => {
                if let Some(m) = object.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("managedFields");
                }
                object
            }
        }
    }
}
