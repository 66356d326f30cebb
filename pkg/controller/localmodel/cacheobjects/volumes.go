package cacheobjects

import (
	"encoding/json"
	"fmt"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/controller/kinds"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/controller/owner"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// Volume is one claim on a group's disk and the volume bound to it.
type Volume struct {
	// Group is the node group whose templates they are made from.
	Group *groupSpec
	// VolumeName is the PersistentVolume's name; Claim the claim's.
	VolumeName string
	Claim      types.NamespacedName
	// Labels name the cache on both.
	Labels map[string]string
	// Folder, when set, is the model folder ({storage key}) the volume
	// binds, alone; else the volume is the group's whole disk (the
	// download claim in Serval's own namespace). ReadOnly claims are the
	// services' (ReadOnlyMany).
	Folder   string
	ReadOnly bool
	// VolumeOwner controls the volume, ClaimOwner the claim.
	VolumeOwner, ClaimOwner *owner.Ref
}

// groupSpec is what a group's volumes are made of.
type groupSpec struct {
	Name   string
	Volume corev1.PersistentVolumeSpec
	Claim  corev1.PersistentVolumeClaimSpec
}

// Objects are the volume and its claim, for the apply step. The volume is
// bound to the claim from both ends (claimRef and volumeName), so no other
// claim of a matching class takes it first.
func (v Volume) Objects() ([]apply.Object, error) {
	labels := map[string]string{v1beta1.ComponentLabel: modelcache.Component, modelcache.GroupNameLabel: v.Group.Name}
	for k, val := range v.Labels {
		labels[k] = val
	}
	pvSpec := *v.Group.Volume.DeepCopy()
	claimSpec := *v.Group.Claim.DeepCopy()
	if v.Folder != "" {
		labels[modelcache.CopyLabel] = v.Folder
		// The folder alone: no subPath of the claim reaches past it.
		switch {
		case pvSpec.HostPath != nil:
			pvSpec.HostPath.Path = path.Join(pvSpec.HostPath.Path, v1alpha1.ModelsFolder, v.Folder)
		case pvSpec.Local != nil:
			pvSpec.Local.Path = path.Join(pvSpec.Local.Path, v1alpha1.ModelsFolder, v.Folder)
		default:
			return nil, fmt.Errorf("the volume template of node group %s is neither a hostPath nor a local volume", v.Group.Name)
		}
	}
	if v.ReadOnly {
		pvSpec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
		claimSpec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}
	}
	pvSpec.ClaimRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: v.Claim.Namespace, Name: v.Claim.Name}
	pv := &corev1ac.PersistentVolumeSpecApplyConfiguration{}
	if err := convert(pvSpec, pv); err != nil {
		return nil, fmt.Errorf("the volume template of node group %s: %w", v.Group.Name, err)
	}
	pvc := &corev1ac.PersistentVolumeClaimSpecApplyConfiguration{}
	claimSpec.VolumeName = v.VolumeName
	if err := convert(claimSpec, pvc); err != nil {
		return nil, fmt.Errorf("the claim template of node group %s: %w", v.Group.Name, err)
	}
	volume := corev1ac.PersistentVolume(v.VolumeName).WithLabels(labels).WithSpec(pv).WithOwnerReferences(v.VolumeOwner.Reference())
	claim := corev1ac.PersistentVolumeClaim(v.Claim.Name, v.Claim.Namespace).WithLabels(labels).WithSpec(pvc).WithOwnerReferences(v.ClaimOwner.Reference())
	return []apply.Object{
		{GVK: corev1.SchemeGroupVersion.WithKind("PersistentVolume"), Key: types.NamespacedName{Name: v.VolumeName}, Spec: volume},
		{GVK: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), Key: v.Claim, Spec: claim},
	}, nil
}

// convert copies a typed value into its apply configuration through JSON:
// the fields a template leaves out stay unset, so Serval owns none of the
// API server's defaults.
func convert(typed, ac any) error {
	data, err := json.Marshal(typed)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, ac)
}

// CacheRef is the owner reference of a cache.
func CacheRef(c v1alpha1.ModelCache) *owner.Ref {
	return &owner.Ref{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.CacheKindOf(c.GetNamespace()),
		Name: c.GetName(), Namespace: c.GetNamespace(), UID: c.GetUID()}
}

// GroupRef is the owner reference of a node group.
func GroupRef(g *v1alpha1.LocalModelNodeGroup) *owner.Ref {
	return &owner.Ref{APIVersion: v1alpha1.GroupVersion.String(), Kind: "LocalModelNodeGroup", Name: g.Name, UID: g.UID}
}

// PersistentVolumeKind and PersistentVolumeClaimKind are the kinds of a
// cache's children; DaemonSetKind the kind of a group's (its agent).
var (
	PersistentVolumeKind      = kinds.Kind{GVK: corev1.SchemeGroupVersion.WithKind("PersistentVolume"), Typed: func() client.Object { return &corev1.PersistentVolume{} }, StatusSignal: kinds.NoStatus}
	PersistentVolumeClaimKind = kinds.Kind{GVK: corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), Typed: func() client.Object { return &corev1.PersistentVolumeClaim{} }, StatusSignal: kinds.NoStatus}
	DaemonSetKind             = kinds.Kind{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Typed: func() client.Object { return &appsv1.DaemonSet{} }, StatusSignal: daemonSetSignal}
	// JobKind is the download Job of a namespace cache on a claim.
	JobKind = kinds.Kind{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Typed: func() client.Object { return &batchv1.Job{} }, StatusSignal: jobSignal}
)

// Kinds are the kinds the model cache kinds create.
func Kinds() []kinds.Kind {
	return []kinds.Kind{PersistentVolumeKind, PersistentVolumeClaimKind, DaemonSetKind, JobKind}
}

// jobSignal is what a cache reads of its download Job: how it ended.
func jobSignal(obj client.Object) string {
	j := obj.(*batchv1.Job)
	return fmt.Sprintf("%d/%d/%d", j.Status.Active, j.Status.Succeeded, j.Status.Failed)
}

// daemonSetSignal is what a group reads of its agent's DaemonSet.
func daemonSetSignal(obj client.Object) string {
	d := obj.(*appsv1.DaemonSet)
	return fmt.Sprintf("%d/%d/%d", d.Status.ObservedGeneration, d.Status.NumberReady, d.Status.DesiredNumberScheduled)
}
