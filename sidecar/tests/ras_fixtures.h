// RAS answers written the way NCCL prints them (src/ras/client_support.cc: jsonWriteHeader,
// jsonStartCommunicator, jsonWriteRankData, jsonStartMissingRanks, jsonWriteMissingRank,
// jsonEndCommunicator, jsonWriteFooter for JSON; rasClientRunInit and rasClientRunComms for
// text). Each says which NCCL version's format it follows.
#pragma once

namespace sidecar::ras_fixtures {

// NCCL 2.28.9, two ranks of one process each, both answering, AllReduce counts equal.
inline constexpr char kHealthy2289[] = R"({
  "nccl_version": "2.28.9",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2026-12-05 10:00:00",
  "communicators_count": 1,
  "communicators": [
    {
      "hash": "0xae94423cfbb2ef4a",
      "secondary_hash": "0xb7e7187447156001:0xb8242ed28a71381e",
      "size": 2,
      "ranks_count": 2,
      "missing_ranks_count": 0,
      "ranks": [
        {
          "rank": 0,
          "host": "10.0.0.7",
          "pid": 41,
          "cuda_dev": 0,
          "nvml_dev": 0,
          "status": {
            "init_state": 0,
            "async_error": 0,
            "finalize_called": false,
            "destroy_flag": false,
            "abort_flag": false
          },
          "collective_counts": {
            "Broadcast": 1,
            "Reduce": 0,
            "AllGather": 0,
            "ReduceScatter": 0,
            "AllReduce": 120
          }
        },
        {
          "rank": 1,
          "host": "10.0.0.8",
          "pid": 42,
          "cuda_dev": 0,
          "nvml_dev": 0,
          "status": {
            "init_state": 0,
            "async_error": 0,
            "finalize_called": false,
            "destroy_flag": false,
            "abort_flag": false
          },
          "collective_counts": {
            "Broadcast": 1,
            "Reduce": 0,
            "AllGather": 0,
            "ReduceScatter": 0,
            "AllReduce": 120
          }
        }
      ],
      "missing_ranks": [

      ]
    }
  ],
  "ras": {
    "collection_time_sec": 0.002,
    "timeouts_count": 0
  }
}
)";

// NCCL 2.28.9, rank 1 missing and dead. 2.28.7 to 2.28.9 print a missing rank's "nvml_dev"
// without the comma before "status" (fixed in 2.29), so this is not JSON as NCCL sends it.
inline constexpr char kDeadPeer2289[] = R"({
  "nccl_version": "2.28.9",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2026-12-05 10:02:00",
  "communicators_count": 1,
  "communicators": [
    {
      "hash": "0xae94423cfbb2ef4a",
      "secondary_hash": "0xb7e7187447156001:0xb8242ed28a71381e",
      "size": 2,
      "ranks_count": 1,
      "missing_ranks_count": 1,
      "ranks": [
        {
          "rank": 0,
          "host": "10.0.0.7",
          "pid": 41,
          "cuda_dev": 0,
          "nvml_dev": 0,
          "status": {
            "init_state": 0,
            "async_error": 0,
            "finalize_called": false,
            "destroy_flag": false,
            "abort_flag": false
          },
          "collective_counts": {
            "Broadcast": 1,
            "Reduce": 0,
            "AllGather": 0,
            "ReduceScatter": 0,
            "AllReduce": 121
          }
        }
      ],
      "missing_ranks": [
        {
          "rank": 1,
          "host": "10.0.0.8",
          "pid": 42,
          "cuda_dev": 0,
          "nvml_dev": 0
          "status": {
            "unresponsive": true,
            "considered_dead": true
          }
        }
      ]
    }
  ],
  "ras": {
    "collection_time_sec": 0.001,
    "timeouts_count": 0
  }
}
)";

// NCCL 2.30.7 (the comma is there), rank 1 unresponsive but not yet dead, RAS timed out twice.
inline constexpr char kUnresponsivePeer2307[] = R"({
  "nccl_version": "2.30.7",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2026-12-05 10:01:00",
  "communicators_count": 1,
  "communicators": [
    {
      "hash": "0xae94423cfbb2ef4a",
      "secondary_hash": "0xb7e7187447156001:0xb8242ed28a71381e",
      "size": 2,
      "ranks_count": 1,
      "missing_ranks_count": 1,
      "ranks": [
        {
          "rank": 0,
          "host": "10.0.0.7",
          "pid": 41,
          "cuda_dev": 0,
          "nvml_dev": 0,
          "status": {
            "init_state": 0,
            "async_error": 6,
            "finalize_called": false,
            "destroy_flag": false,
            "abort_flag": false
          },
          "collective_counts": {
            "Broadcast": 1,
            "Reduce": 0,
            "AllGather": 0,
            "ReduceScatter": 0,
            "AllReduce": 121
          }
        }
      ],
      "missing_ranks": [
        {
          "rank": 1,
          "host": "10.0.0.8",
          "pid": 42,
          "cuda_dev": 0,
          "nvml_dev": 0,
          "status": {
            "unresponsive": true,
            "considered_dead": false
          }
        }
      ]
    }
  ],
  "ras": {
    "collection_time_sec": 5.004,
    "timeouts_count": 2
  }
}
)";

// NCCL 2.28.9 with no communicator (a process whose communicators were all destroyed).
inline constexpr char kNoCommunicators2289[] = R"({
  "nccl_version": "2.28.9",
  "cuda_runtime_version": 13000,
  "cuda_driver_version": 13000,
  "timestamp": "2026-12-05 10:03:00",
  "communicators_count": 0,
  "communicators": [

  ],
  "ras": {
    "collection_time_sec": 0.000,
    "timeouts_count": 0
  }
}
)";

// The text answer (STATUS without SET FORMAT; the only form before NCCL 2.28.7), as NCCL
// 2.28.9 prints it: 32 ranks on 4 nodes, one process stopped and declared dead, a second
// communicator whose ranks disagree on their AllReduce count.
inline constexpr char kText2289[] = R"(NCCL version 2.28.9 compiled with CUDA 13.0
CUDA runtime version 13000, driver version 13000

Job summary
===========

  Nodes  Processes         GPUs  Processes     GPUs
(total)   per node  per process    (total)  (total)
      4          8            1         32       32

Communicators... (2.05s)
=============

Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         1         4       7-8        32        32   RUNNING  INCOMPLETE
    1         1         4         8        32        32   RUNNING  MISMATCH

Errors
======

DEAD
  1 job process is considered dead (unreachable via the RAS network)
  Process 3487984 on node 172.16.64.213 managing GPU 5

#0-0 (cf264af53edbe986) INCOMPLETE
  Missing communicator data from 1 rank
  Rank 21 -- GPU 5 managed by process 3487984 on node 172.16.64.213

Warnings
========

TIMEOUT
  Encountered 2 communication timeouts while gathering communicator data

#1-0 (27a079b828ff1a75) MISMATCH
  Communicator ranks have different AllReduce operation counts
  26 ranks have launched up to operation 6650
  6 ranks have launched up to operation 6649
  Rank 0 -- GPU 0 managed by process 483072 on node 172.16.64.210
  Rank 2 -- GPU 2 managed by process 483074 on node 172.16.64.210

)";

}  // namespace sidecar::ras_fixtures
