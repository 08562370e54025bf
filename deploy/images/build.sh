#!/bin/sh
# Builds every per-kind tag of glimmer's two runner images, for amd64 and arm64, and with
# PUSH=1 pushes them: the list comes from glimmer itself (`python -m glimmer.contract.images`,
# the same table the kinds' default images are read from), so the tags built are the tags a
# release of glimmer asks for, and the version is written nowhere but pyproject.toml.
#
# Run from the repository root, with glimmer installed in PYTHON's environment (make install):
#   deploy/images/build.sh                      # build only
#   PUSH=1 deploy/images/build.sh               # and push to the registry in the references
#   KINDS="gemm-sweep nccl" deploy/images/build.sh   # only these kinds' tags
# BUILDER=podman (default) or docker (buildx); PLATFORMS, and BUILD_ARGS (e.g.
# "--build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu130") are passed to every build.
set -eu

PYTHON=${PYTHON:-.venv/bin/python}
BUILDER=${BUILDER:-podman}
PLATFORMS=${PLATFORMS:-linux/amd64,linux/arm64}
BUILD_ARGS=${BUILD_ARGS:-}
KINDS=${KINDS:-}
PUSH=${PUSH:-}

version=$("$PYTHON" -c 'from glimmer.contract.images import RELEASE; print(RELEASE)')
case "$version" in
*unknown*)
    echo "build.sh: glimmer is not installed in $PYTHON (version $version): run make install" >&2
    exit 2
    ;;
esac

"$PYTHON" -m glimmer.contract.images | while read -r containerfile kind reference; do
    if [ -n "$KINDS" ]; then
        case " $KINDS " in *" $kind "*) ;; *) continue ;; esac
    fi
    echo "== $reference ($containerfile, stage $kind)"
    # shellcheck disable=SC2086 # BUILD_ARGS is a list of words on purpose
    if [ "$BUILDER" = docker ]; then
        docker buildx build --platform "$PLATFORMS" --target "$kind" \
            --build-arg GLIMMER_VERSION="$version" $BUILD_ARGS \
            -t "$reference" ${PUSH:+--push} -f "deploy/images/$containerfile" .
    else
        podman manifest rm "$reference" >/dev/null 2>&1 || true
        podman build --platform "$PLATFORMS" --target "$kind" \
            --build-arg GLIMMER_VERSION="$version" $BUILD_ARGS \
            --manifest "$reference" -f "deploy/images/$containerfile" .
        if [ -n "$PUSH" ]; then
            podman manifest push --all "$reference" "docker://$reference"
        fi
    fi
done
