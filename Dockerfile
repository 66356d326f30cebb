# The Serval manager image.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /manager ./cmd/manager && \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /router ./cmd/router

FROM gcr.io/distroless/static:nonroot
COPY --from=build /manager /manager
COPY --from=build /router /router
USER 65532:65532
ENTRYPOINT ["/manager"]
