"""The categories of a certification (specs/certify.md §6–7), each over a substrate:
``communication`` (nccl-tests over groups, judged by ``nccl_oracle``, isolated when a group
fails), ``diagnostics`` (DCGM per node) and ``training`` (goodput and throughput per GPU)."""
