//! The messages of the KMS v2 plugin API (`k8s.io/kms/apis/v2/api.proto`, package `v2`,
//! service `KeyManagementService`: `Status`, `Encrypt`, `Decrypt`) and of what kube stores
//! (`k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/v2/api.proto`:
//! `EncryptedObject`), as prost messages with the upstream field numbers.

use std::collections::BTreeMap;

/// `StatusRequest`: empty.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusRequest {}

/// `StatusResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusResponse {
    /// The plugin's API version: `v2` (or `v2beta1`).
    #[prost(string, tag = "1")]
    pub version: String,
    /// `ok` when healthy; anything else fails the server's health check with it.
    #[prost(string, tag = "2")]
    pub healthz: String,
    /// The plugin's current key; a change makes the server generate a new seed.
    #[prost(string, tag = "3")]
    pub key_id: String,
}

/// `EncryptRequest`: the seed (or DEK) to encrypt.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EncryptRequest {
    /// What to encrypt.
    #[prost(bytes = "vec", tag = "1")]
    pub plaintext: Vec<u8>,
    /// A unique id of the request, for the plugin's logs.
    #[prost(string, tag = "2")]
    pub uid: String,
}

/// `EncryptResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EncryptResponse {
    /// The encrypted seed.
    #[prost(bytes = "vec", tag = "1")]
    pub ciphertext: Vec<u8>,
    /// The key that encrypted it.
    #[prost(string, tag = "2")]
    pub key_id: String,
    /// Whatever the plugin needs to decrypt it later, stored beside it.
    #[prost(btree_map = "string, bytes", tag = "3")]
    pub annotations: BTreeMap<String, Vec<u8>>,
}

/// `DecryptRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DecryptRequest {
    /// The encrypted seed.
    #[prost(bytes = "vec", tag = "1")]
    pub ciphertext: Vec<u8>,
    /// A unique id of the request.
    #[prost(string, tag = "2")]
    pub uid: String,
    /// The key the plugin said encrypted it.
    #[prost(string, tag = "3")]
    pub key_id: String,
    /// The plugin's annotations from the encryption.
    #[prost(btree_map = "string, bytes", tag = "4")]
    pub annotations: BTreeMap<String, Vec<u8>>,
}

/// `DecryptResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DecryptResponse {
    /// The seed.
    #[prost(bytes = "vec", tag = "1")]
    pub plaintext: Vec<u8>,
}

/// `EncryptedDEKSourceType::AES_GCM_KEY`: the source is the data key itself.
pub const AES_GCM_KEY: i32 = 0;

/// `EncryptedDEKSourceType::HKDF_SHA256_XNONCE_AES_GCM_SEED`: the source is a seed each
/// write derives its key from (what this server writes).
pub const HKDF_SHA256_XNONCE_AES_GCM_SEED: i32 = 1;

/// `EncryptedObject`: what is stored after `k8s:enc:kms:v2:<name>:`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EncryptedObject {
    /// The object, encrypted.
    #[prost(bytes = "vec", tag = "1")]
    pub encrypted_data: Vec<u8>,
    /// The KMS key that encrypted the DEK source.
    #[prost(string, tag = "2")]
    pub key_id: String,
    /// The DEK source, encrypted by the KMS.
    #[prost(bytes = "vec", tag = "3")]
    pub encrypted_dek_source: Vec<u8>,
    /// The plugin's annotations.
    #[prost(btree_map = "string, bytes", tag = "4")]
    pub annotations: BTreeMap<String, Vec<u8>>,
    /// [`AES_GCM_KEY`] or [`HKDF_SHA256_XNONCE_AES_GCM_SEED`].
    #[prost(int32, tag = "5")]
    pub encrypted_dek_source_type: i32,
}
