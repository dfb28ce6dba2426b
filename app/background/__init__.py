"""Work done outside a request: the queue (RQ on Redis, else inline), periodic passes, the worker
command and RQ's scheduler."""
