module difypack

go 1.26

// The versions dify-plugin-daemon's go.mod selects at bdb5642a (except go-toml, see
// assemble_vendor.py). Built only with -mod=vendor from mirrors: there is no go.sum.
require (
	github.com/langgenius/dify-plugin-daemon v0.0.0-20260821083658-bdb5642a1900
	github.com/gin-gonic/gin v1.12.0
	github.com/gin-contrib/sse v1.1.0
	github.com/go-playground/validator/v10 v10.30.1
	github.com/go-playground/locales v0.14.1
	github.com/go-playground/universal-translator v0.18.1
	github.com/leodido/go-urn v1.4.0
	github.com/gabriel-vasile/mimetype v1.4.12
	github.com/go-git/go-git/v5 v5.19.2
	github.com/go-git/go-billy/v5 v5.9.0
	github.com/go-git/gcfg v1.5.1-0.20230307220236-3a3c6141e376
	gopkg.in/warnings.v0 v0.1.2
	github.com/jbenet/go-context v0.0.0-20150711004518-d14ea06fba99
	gopkg.in/yaml.v3 v3.0.1
	github.com/google/uuid v1.6.0
	github.com/fxamacker/cbor/v2 v2.7.0
	github.com/x448/float16 v0.8.4
	github.com/mitchellh/mapstructure v1.5.0
	github.com/shopspring/decimal v1.4.0
	github.com/mattn/go-isatty v0.0.20
	github.com/goccy/go-yaml v1.19.2
	github.com/pelletier/go-toml/v2 v2.2.0
	github.com/quic-go/quic-go v0.59.1
	github.com/quic-go/qpack v0.6.0
	go.mongodb.org/mongo-driver/v2 v2.5.0
	google.golang.org/protobuf v1.36.11
	golang.org/x/net v0.56.0
	golang.org/x/crypto v0.53.0
	golang.org/x/sys v0.46.0
	golang.org/x/text v0.39.0
)
