//! core/v1 volumes (`Volume`, `VolumeSource` and every source; the legacy in-tree cloud
//! sources are refused) — `k8s.io/api/core/v1/types.go`.

use super::core_kinds::*;
use super::json::*;
use super::meta::*;
use k8s_pb::api::core::v1 as core;
use serde_json::{Map, Value};

pub(super) fn volume(v: core::Volume) -> R<Value> {
    object!(v, core::Volume {
        name: "name" => str_value,
        volume_source: "" => struct_value(volume_source),
    })
}

pub(super) fn volume_source(v: core::VolumeSource) -> R<Value> {
    object!(v, core::VolumeSource {
        host_path: "hostPath" => ptr_struct(host_path_volume_source),
        empty_dir: "emptyDir" => ptr_struct(empty_dir_volume_source),
        gce_persistent_disk: "gcePersistentDisk" => refused("gcePersistentDisk"),
        aws_elastic_block_store: "awsElasticBlockStore" => refused("awsElasticBlockStore"),
        git_repo: "gitRepo" => ptr_struct(git_repo_volume_source),
        secret: "secret" => ptr_struct(secret_volume_source),
        nfs: "nfs" => ptr_struct(nfs_volume_source),
        iscsi: "iscsi" => refused("iscsi"),
        glusterfs: "glusterfs" => refused("glusterfs"),
        persistent_volume_claim: "persistentVolumeClaim" => ptr_struct(persistent_volume_claim_volume_source),
        rbd: "rbd" => refused("rbd"),
        flex_volume: "flexVolume" => refused("flexVolume"),
        cinder: "cinder" => refused("cinder"),
        cephfs: "cephfs" => refused("cephfs"),
        flocker: "flocker" => refused("flocker"),
        downward_api: "downwardAPI" => ptr_struct(downward_api_volume_source),
        fc: "fc" => refused("fc"),
        azure_file: "azureFile" => refused("azureFile"),
        config_map: "configMap" => ptr_struct(config_map_volume_source),
        vsphere_volume: "vsphereVolume" => refused("vsphereVolume"),
        quobyte: "quobyte" => refused("quobyte"),
        azure_disk: "azureDisk" => refused("azureDisk"),
        photon_persistent_disk: "photonPersistentDisk" => refused("photonPersistentDisk"),
        projected: "projected" => ptr_struct(projected_volume_source),
        portworx_volume: "portworxVolume" => refused("portworxVolume"),
        scale_io: "scaleIO" => refused("scaleIO"),
        storageos: "storageos" => refused("storageos"),
        csi: "csi" => ptr_struct(csi_volume_source),
        ephemeral: "ephemeral" => ptr_struct(ephemeral_volume_source),
        image: "image" => ptr_struct(image_volume_source),
    })
}

pub(super) fn host_path_volume_source(h: core::HostPathVolumeSource) -> R<Value> {
    object!(h, core::HostPathVolumeSource {
        path: "path" => str_value,
        r#type: "type" => ptr_str,
    })
}

pub(super) fn empty_dir_volume_source(e: core::EmptyDirVolumeSource) -> R<Value> {
    object!(e, core::EmptyDirVolumeSource {
        medium: "medium" => omitempty_str,
        size_limit: "sizeLimit" => ptr_quantity,
    })
}

pub(super) fn git_repo_volume_source(g: core::GitRepoVolumeSource) -> R<Value> {
    object!(g, core::GitRepoVolumeSource {
        repository: "repository" => str_value,
        revision: "revision" => omitempty_str,
        directory: "directory" => omitempty_str,
    })
}

pub(super) fn secret_volume_source(v: core::SecretVolumeSource) -> R<Value> {
    object!(v, core::SecretVolumeSource {
        secret_name: "secretName" => omitempty_str,
        items: "items" => omitempty_list(key_to_path),
        default_mode: "defaultMode" => ptr_int,
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn config_map_volume_source(v: core::ConfigMapVolumeSource) -> R<Value> {
    object!(v, core::ConfigMapVolumeSource {
        local_object_reference: "" => struct_value(local_object_reference),
        items: "items" => omitempty_list(key_to_path),
        default_mode: "defaultMode" => ptr_int,
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn key_to_path(k: core::KeyToPath) -> R<Value> {
    object!(k, core::KeyToPath {
        key: "key" => str_value,
        path: "path" => str_value,
        mode: "mode" => ptr_int,
    })
}

pub(super) fn nfs_volume_source(n: core::NfsVolumeSource) -> R<Value> {
    object!(n, core::NfsVolumeSource {
        server: "server" => str_value,
        path: "path" => str_value,
        read_only: "readOnly" => omitempty_bool,
    })
}

pub(super) fn persistent_volume_claim_volume_source(
    p: core::PersistentVolumeClaimVolumeSource,
) -> R<Value> {
    object!(p, core::PersistentVolumeClaimVolumeSource {
        claim_name: "claimName" => str_value,
        read_only: "readOnly" => omitempty_bool,
    })
}

pub(super) fn downward_api_volume_source(d: core::DownwardAPIVolumeSource) -> R<Value> {
    object!(d, core::DownwardAPIVolumeSource {
        items: "items" => omitempty_list(downward_api_volume_file),
        default_mode: "defaultMode" => ptr_int,
    })
}

pub(super) fn downward_api_volume_file(f: core::DownwardAPIVolumeFile) -> R<Value> {
    object!(f, core::DownwardAPIVolumeFile {
        path: "path" => str_value,
        field_ref: "fieldRef" => ptr_struct(object_field_selector),
        resource_field_ref: "resourceFieldRef" => ptr_struct(resource_field_selector),
        mode: "mode" => ptr_int,
    })
}

pub(super) fn projected_volume_source(p: core::ProjectedVolumeSource) -> R<Value> {
    object!(p, core::ProjectedVolumeSource {
        sources: "sources" => list_or_null(volume_projection),
        default_mode: "defaultMode" => ptr_int,
    })
}

pub(super) fn volume_projection(p: core::VolumeProjection) -> R<Value> {
    object!(p, core::VolumeProjection {
        secret: "secret" => ptr_struct(secret_projection),
        downward_api: "downwardAPI" => ptr_struct(downward_api_projection),
        config_map: "configMap" => ptr_struct(config_map_projection),
        service_account_token: "serviceAccountToken" => ptr_struct(service_account_token_projection),
        cluster_trust_bundle: "clusterTrustBundle" => ptr_struct(cluster_trust_bundle_projection),
        pod_certificate: "podCertificate" => ptr_struct(pod_certificate_projection),
    })
}

pub(super) fn secret_projection(p: core::SecretProjection) -> R<Value> {
    object!(p, core::SecretProjection {
        local_object_reference: "" => struct_value(local_object_reference),
        items: "items" => omitempty_list(key_to_path),
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn config_map_projection(p: core::ConfigMapProjection) -> R<Value> {
    object!(p, core::ConfigMapProjection {
        local_object_reference: "" => struct_value(local_object_reference),
        items: "items" => omitempty_list(key_to_path),
        optional: "optional" => ptr_bool,
    })
}

pub(super) fn downward_api_projection(p: core::DownwardAPIProjection) -> R<Value> {
    object!(p, core::DownwardAPIProjection {
        items: "items" => omitempty_list(downward_api_volume_file),
    })
}

pub(super) fn service_account_token_projection(p: core::ServiceAccountTokenProjection) -> R<Value> {
    object!(p, core::ServiceAccountTokenProjection {
        audience: "audience" => omitempty_str,
        expiration_seconds: "expirationSeconds" => ptr_int,
        path: "path" => str_value,
    })
}

pub(super) fn cluster_trust_bundle_projection(p: core::ClusterTrustBundleProjection) -> R<Value> {
    object!(p, core::ClusterTrustBundleProjection {
        name: "name" => ptr_str,
        signer_name: "signerName" => ptr_str,
        label_selector: "labelSelector" => ptr_struct(label_selector),
        optional: "optional" => ptr_bool,
        path: "path" => str_value,
    })
}

pub(super) fn pod_certificate_projection(p: core::PodCertificateProjection) -> R<Value> {
    object!(p, core::PodCertificateProjection {
        signer_name: "signerName" => omitempty_str,
        key_type: "keyType" => omitempty_str,
        max_expiration_seconds: "maxExpirationSeconds" => ptr_int,
        credential_bundle_path: "credentialBundlePath" => omitempty_str,
        key_path: "keyPath" => omitempty_str,
        certificate_chain_path: "certificateChainPath" => omitempty_str,
        user_annotations: "userAnnotations" => omitempty_string_map,
    })
}

pub(super) fn csi_volume_source(c: core::CSIVolumeSource) -> R<Value> {
    object!(c, core::CSIVolumeSource {
        driver: "driver" => str_value,
        read_only: "readOnly" => ptr_bool,
        fs_type: "fsType" => ptr_str,
        volume_attributes: "volumeAttributes" => omitempty_string_map,
        node_publish_secret_ref: "nodePublishSecretRef" => ptr_struct(local_object_reference),
    })
}

pub(super) fn ephemeral_volume_source(e: core::EphemeralVolumeSource) -> R<Value> {
    object!(e, core::EphemeralVolumeSource {
        volume_claim_template: "volumeClaimTemplate" => ptr_struct(persistent_volume_claim_template),
    })
}

pub(super) fn persistent_volume_claim_template(t: core::PersistentVolumeClaimTemplate) -> R<Value> {
    object!(t, core::PersistentVolumeClaimTemplate {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(persistent_volume_claim_spec),
    })
}

pub(super) fn persistent_volume_claim_spec(s_: core::PersistentVolumeClaimSpec) -> R<Value> {
    object!(s_, core::PersistentVolumeClaimSpec {
        access_modes: "accessModes" => omitempty_strings,
        selector: "selector" => ptr_struct(label_selector),
        resources: "resources" => struct_value(volume_resource_requirements),
        volume_name: "volumeName" => omitempty_str,
        storage_class_name: "storageClassName" => ptr_str,
        volume_mode: "volumeMode" => ptr_str,
        data_source: "dataSource" => ptr_struct(typed_local_object_reference),
        data_source_ref: "dataSourceRef" => ptr_struct(typed_object_reference),
        volume_attributes_class_name: "volumeAttributesClassName" => ptr_str,
    })
}

pub(super) fn volume_resource_requirements(r: core::VolumeResourceRequirements) -> R<Value> {
    object!(r, core::VolumeResourceRequirements {
        limits: "limits" => omitempty_resource_list,
        requests: "requests" => omitempty_resource_list,
    })
}

pub(super) fn typed_local_object_reference(r: core::TypedLocalObjectReference) -> R<Value> {
    object!(r, core::TypedLocalObjectReference {
        api_group: "apiGroup" => ptr_str,
        kind: "kind" => str_value,
        name: "name" => str_value,
    })
}

pub(super) fn typed_object_reference(r: core::TypedObjectReference) -> R<Value> {
    object!(r, core::TypedObjectReference {
        api_group: "apiGroup" => ptr_str,
        kind: "kind" => str_value,
        name: "name" => str_value,
        namespace: "namespace" => ptr_str,
    })
}

pub(super) fn image_volume_source(i_: core::ImageVolumeSource) -> R<Value> {
    object!(i_, core::ImageVolumeSource {
        reference: "reference" => omitempty_str,
        pull_policy: "pullPolicy" => omitempty_str,
    })
}
