// Specs of redaction: secret names, brokers, env values, sinks JSON.

package recorder_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fb46ecde/records/drakkar/recorder"
)

var _ = Describe("redaction", func() {
	DescribeTable("tells secret names from others",
		func(name string, secret bool) { Expect(recorder.IsSecretName(name)).To(Equal(secret)) },
		Entry(nil, "DB_PASSWORD", true),
		Entry(nil, "db_passwd", true),
		Entry(nil, "AWS_SECRET_ACCESS_KEY", true),
		Entry(nil, "CLIENT_SECRETS", true),
		Entry(nil, "GITHUB_TOKEN", true),
		Entry(nil, "ACCESS_TOKENS", true),
		Entry(nil, "API_KEY", true),
		Entry(nil, "APIKEY", true),
		Entry(nil, "apiKey", true),
		Entry(nil, "SSH_KEYS", true),
		Entry(nil, "GOOGLE_APPLICATION_CREDENTIALS", true),
		Entry(nil, "DB_CREDS", true),
		Entry(nil, "BASIC_AUTH", true),
		Entry(nil, "OAUTH", true),
		Entry(nil, "PRIVATE_PEM", true),
		Entry(nil, "SMTP_PASS", true),
		Entry(nil, "sasl.password", true),
		Entry(nil, "KEYBOARD_LAYOUT", false),
		Entry(nil, "TOKENIZERS_PARALLELISM", false),
		Entry(nil, "AUTHOR", false),
		Entry(nil, "PWD", false),
		Entry(nil, "HOME", false),
		Entry(nil, "PATH", false),
		Entry(nil, "", false),
	)

	DescribeTable("strips credentials from the broker list",
		func(in, want string) { Expect(recorder.RedactBrokers(in)).To(Equal(want)) },
		Entry("plain brokers are kept", "k1:9092,k2:9092", "k1:9092,k2:9092"),
		Entry("user info", "user:pass@host:9092", "host:9092"),
		Entry("user info with @ in the password", "user:p@ss@host:9092", "host:9092"),
		Entry("scheme kept, user info gone", "SASL_SSL://u:p@h:9093,h2:9093", "SASL_SSL://h:9093,h2:9093"),
		Entry("secret query parameters dropped, others kept", "h:9092?sasl.password=x&tls=1&sasl.username=u", "h:9092?tls=1&sasl.username=u"),
		Entry("only secret parameters", "h:9092?sasl_password=x", "h:9092"),
		Entry("empty", "", ""),
	)

	DescribeTable("hides the user info of URLs in text",
		func(in, want string) { Expect(recorder.RedactURLs(in)).To(Equal(want)) },
		Entry(nil, "postgres://u:p@db:5432/x", "postgres://***@db:5432/x"),
		Entry(nil, "a http://h/x?y=@z b", "a http://h/x?y=@z b"),
		Entry(nil, "x https://t@h y s3://k:s@b/p", "x https://***@h y s3://***@b/p"),
		Entry(nil, "no url", "no url"),
	)

	It("hides secret-named env values and URL credentials in the others", func() {
		Expect(recorder.RedactEnv(map[string]string{
			"DB_PASSWORD": "hunter2", "HOME": "/home/w", "DATABASE_URL": "postgres://u:p@db/x",
		})).To(Equal(map[string]string{
			"DB_PASSWORD": "***", "HOME": "/home/w", "DATABASE_URL": "postgres://***@db/x",
		}))
		Expect(recorder.RedactEnv(nil)).To(BeNil())
	})

	It("hides secret-named keys at any depth of the sinks JSON, whatever their value", func() {
		in := map[string]any{
			"kafka": map[string]any{"topic": "out", "sasl": map[string]any{"password": "x", "user": "u"}},
			"http":  []any{map[string]any{"url": "https://u:p@h/x", "apiKey": 123, "auth": map[string]any{"a": 1}}},
		}
		Expect(recorder.RedactJSON(in)).To(Equal(map[string]any{
			"kafka": map[string]any{"topic": "out", "sasl": map[string]any{"password": "***", "user": "u"}},
			"http":  []any{map[string]any{"url": "https://***@h/x", "apiKey": "***", "auth": "***"}},
		}))
		Expect(in["kafka"].(map[string]any)["sasl"].(map[string]any)["password"]).To(Equal("x"), "the input is not changed")
	})
})
