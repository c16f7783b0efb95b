# flow.torch: trainers are a real PyTorch program (gloo): init_process_group from the env via the
# nccl_k8s package (MASTER_ADDR = the root pod's IP) and a checked all_reduce: Succeeded.
# Sourced by flow_test.sh, which sets up the node, the namespace $ns and the operator first.

scenario() {
  torch_setup
  torch_job torch "$flow_root/tests/e2e/flow/torch_trainer.py"
  wait_for 300 "torch Succeeded" state_is torch Succeeded
  check "attempt/restarts" "$(nj torch '{.status.attempt}/{.status.restarts}')" 1/0
  check_torch_ranks torch 1
  # The template's variable refers to the job's (envFrom) and the pod's (env) contract variables.
  local i
  for i in 0 1 2 3; do
    contains "torch-$i: the template's \$(MASTER_ADDR) ... references expanded" \
      "$(k logs "torch-$i" -c trainer 2>/dev/null | grep '^refs ' | tail -1)" \
      "refs torch-0.torch.$ns.svc:29500 rank $i of 4 job torch"
  done
}
