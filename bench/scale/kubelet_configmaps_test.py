"""Tests of the kubelets' ConfigMap reads as the scale bench plays them (kubelet_configmaps.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kubelet_configmaps as k  # noqa: E402


def pod(uid, node, env_from=None, key_ref=None):
    trainer = {"name": "trainer", "env": [{"name": "A", "value": "1"}]}
    if env_from:
        trainer["envFrom"] = [{"configMapRef": {"name": env_from}}, {"secretRef": {"name": "s"}}]
    if key_ref:
        trainer["env"].append({"name": "B", "valueFrom": {"configMapKeyRef": {"name": key_ref, "key": "b"}}})
    return {"metadata": {"uid": uid},
            "spec": {"nodeName": node, "containers": [trainer],
                     "volumes": [{"name": "token", "projected": {"sources": [
                         {"serviceAccountToken": {"path": "token"}},
                         {"configMap": {"name": "kube-root-ca.crt"}}]}},
                         {"name": "conf", "configMap": {"name": "conf"}}]}}


def test_every_kind_of_reference_is_found():
    assert k.configmaps_of(pod("u", "n", env_from="env", key_ref="one")) == {"env", "one", "kube-root-ca.crt", "conf"}
    assert k.configmaps_of({"spec": {}}) == set()


def test_a_node_reads_a_configmap_when_its_first_pod_refers_to_it_and_again_after_the_last_went():
    refs = k.References()
    assert refs.seen(pod("a", "n1", env_from="env")) == ["conf", "env", "kube-root-ca.crt"]
    assert refs.seen(pod("a", "n1", env_from="env")) == [], "one pod is counted once"
    assert refs.seen(pod("b", "n1", env_from="env")) == [], "the node reads it already"
    assert refs.seen(pod("c", "n2", env_from="env")) == ["conf", "env", "kube-root-ca.crt"], "each node reads its own"
    refs.gone(pod("a", "n1"))
    assert refs.seen(pod("d", "n1", env_from="env")) == [], "b still refers to them"
    refs.gone(pod("b", "n1"))
    refs.gone(pod("d", "n1"))
    assert refs.seen(pod("e", "n1", env_from="env")) == ["conf", "env", "kube-root-ca.crt"]


def test_an_unbound_pod_is_not_counted_until_it_is_bound():
    refs = k.References()
    unbound = pod("a", None, env_from="env")
    assert refs.seen(unbound) == []
    assert refs.seen(pod("a", "n1", env_from="env")) == ["conf", "env", "kube-root-ca.crt"]


def test_a_pod_that_ended_gives_its_references_back_as_a_kubelet_unregisters_it():
    refs = k.References()
    assert refs.seen(pod("a", "n1", env_from="env")) == ["conf", "env", "kube-root-ca.crt"]
    refs.gone(pod("a", "n1"))
    refs.gone(pod("a", "n1"))  # its later DELETED event changes nothing
    assert refs.seen(pod("b", "n1", env_from="env")) == ["conf", "env", "kube-root-ca.crt"]
