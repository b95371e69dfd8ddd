# The llmrun image: llmrun as one static binary on a minimal base, run as
# a non-root user; its entrypoint is llmrun ("llmrun kube" writes Jobs
# that run it). Build and push it (docs/distributed.md):
#
#   docker build -t REGISTRY/llmrun:TAG --build-arg VERSION=TAG .
#   docker push REGISTRY/llmrun:TAG

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
# Static (no cgo, so no libc to find at run time), reproducible paths, the
# version llmrun prints.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/llmrun ./cmd/llmrun

# distroless/static: CA certificates, /etc/passwd with the user nonroot
# (65532), time zones; no shell, no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmrun /usr/local/bin/llmrun
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/llmrun"]
