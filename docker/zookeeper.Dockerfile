# ZooKeeper server image, from Debian's packages only: OpenJDK 17 and
# Debian's ZooKeeper 3.8 jars (libzookeeper-java; the `zookeeper` package
# adds only init scripts and pulls a full default-jre).  Build context: the
# repository root.
#   Docker:  docker build -f docker/zookeeper.Dockerfile -t zkroute-zookeeper .
#   podman:  docker/build-image.sh (FROM is replaced by a Debian 12 root
#            filesystem made with mmdebstrap: no image registry needed)
# One image for every member: ZK_ID, ZK_NET, ZK_PORT, ZK_MEMBERS choose the
# member and its loopback address (docker/zk-server.sh).  Run it with host
# networking: member i binds only ZK_NET.i (default 127.0.50.i).
ARG BASE=debian:12
FROM $BASE

ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        openjdk-17-jre-headless libzookeeper-java libslf4j-java \
    && rm -rf /var/lib/apt/lists/*

COPY docker/zk-server.sh /usr/local/bin/zk-server.sh
ENV ZK_NET=127.0.50 ZK_PORT=2181 ZK_MEMBERS=3
# Docker reads this; podman keeps it only in --format docker images, so
# docker/containers.sh passes the same command with --health-cmd.
HEALTHCHECK --interval=2s --timeout=3s --start-period=5s --retries=30 \
    CMD ["/usr/local/bin/zk-server.sh", "health"]
ENTRYPOINT ["/usr/local/bin/zk-server.sh"]
CMD ["run"]
