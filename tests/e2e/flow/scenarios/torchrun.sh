# flow.torchrun: the same program under `python -m nccl_k8s.torchrun` (NNODES, NODE_RANK,
# LOCAL_WORLD_SIZE).
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  torch_setup
  torch_job trun -m nccl_k8s.torchrun "$flow_root/tests/e2e/flow/torch_trainer.py"
  wait_for 300 "trun Succeeded" state_is trun Succeeded
  check_torch_ranks trun 1
}
