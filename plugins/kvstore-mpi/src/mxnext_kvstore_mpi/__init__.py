"""mxnext-kvstore-mpi: MXNet 1.x's ``dist_sync`` and ``dist_sync_device`` KVStores over MPI
(mpi4py), and the ``mxnext launch`` command. Importing this package imports no MPI."""
