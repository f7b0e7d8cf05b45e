//! KMS v2 (`k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2`): envelope encryption
//! through an external key management service's plugin, reached over gRPC on a unix socket.
//! - `api.rs`: the plugin API's and the stored object's protobuf messages;
//! - `grpc_service.rs`: the plugin client;
//! - `envelope.rs`: the transformer, its seed and cache, and its probe.

pub mod api;
mod envelope;
mod grpc_service;

pub use envelope::{EnvelopeTransformer, KmsV2, PREFIX};
pub use grpc_service::GrpcService;
