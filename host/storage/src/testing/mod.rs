//! Test support shared by this crate's tests and the host's: a real etcd server
//! ([`etcd::EtcdServer`]) and the storage conformance suite ([`conformance`]), a port of
//! `k8s.io/apiserver/pkg/storage/testing`.

pub mod conformance;
pub mod etcd;
