/*
 * Issuer.java — a small OIDC issuer for the tests: the client-credentials
 * grant and a JWKS, over HTTPS, RS256 tokens.  Run from source (java
 * Issuer.java ...: the JDK alone, no jar), as test/lib/apache_kafka.sh does.
 *
 * Usage: java Issuer.java --port N --keystore P12 --password PW
 *             --issuer URL --audience AUD [--log FILE]
 *             --client ID:SECRET:LIFETIME_SECONDS...
 *
 *   POST /token  grant_type=client_credentials; the client's id and secret
 *                by HTTP Basic (as librdkafka sends them) or in the form
 *                (client_id, client_secret); scope from the form (default
 *                "kafka").  Answers {"access_token", "token_type": "Bearer",
 *                "expires_in", "scope"}: a JWT signed RS256 (kid
 *                "ro-test-1") whose claims are iss, sub (the client id),
 *                aud, iat, exp (iat + the client's lifetime) and scope.  A
 *                wrong id or secret: 401 invalid_client; another grant: 400
 *                unsupported_grant_type.
 *   GET /jwks    the signing key's public half as a JWK Set.
 *   GET /.well-known/openid-configuration
 *                issuer, token_endpoint and jwks_uri.
 *
 * The TLS key and certificate come from the PKCS12 keystore (the test CA's
 * server certificate); the signing key is made at start and lives as long
 * as the process.  One line on --log (default stderr) per answer: "token
 * client=ID exp=EPOCH", "refused client=ID reason=...", "jwks": the tests
 * count the tokens served from it.  Binds 127.0.0.1 only.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

import java.io.FileInputStream;
import java.io.FileWriter;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.Signature;
import java.security.interfaces.RSAPublicKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

public class Issuer {
    static final String KID = "ro-test-1";
    static final Base64.Encoder B64URL = Base64.getUrlEncoder().withoutPadding();

    final String issuer;
    final String audience;
    final Map<String, String[]> clients = new HashMap<>();  // id -> {secret, lifetime}
    final KeyPair signing;
    final PrintWriter log;

    Issuer(String issuer, String audience, List<String> clientSpecs, PrintWriter log) throws Exception {
        this.issuer = issuer;
        this.audience = audience;
        this.log = log;
        for (String spec : clientSpecs) {
            int last = spec.lastIndexOf(':');
            int mid = spec.lastIndexOf(':', last - 1);
            clients.put(spec.substring(0, mid),
                        new String[] {spec.substring(mid + 1, last), spec.substring(last + 1)});
        }
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        signing = gen.generateKeyPair();
    }

    /* unsigned big-endian bytes of a JWK number (no leading zero byte) */
    static String b64uint(java.math.BigInteger n) {
        byte[] b = n.toByteArray();
        if (b.length > 1 && b[0] == 0)
            b = java.util.Arrays.copyOfRange(b, 1, b.length);
        return B64URL.encodeToString(b);
    }

    static String b64json(String json) {
        return B64URL.encodeToString(json.getBytes(StandardCharsets.UTF_8));
    }

    /* a JSON string literal (the values here are ids, URLs and scopes) */
    static String q(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\')
                out.append('\\').append(c);
            else if (c < 0x20)
                out.append(String.format("\\u%04x", (int) c));
            else
                out.append(c);
        }
        return out.append('"').toString();
    }

    synchronized void note(String line) {
        log.println(line);
        log.flush();
    }

    String jwks() {
        RSAPublicKey pub = (RSAPublicKey) signing.getPublic();
        return "{\"keys\":[{\"kty\":\"RSA\",\"use\":\"sig\",\"alg\":\"RS256\",\"kid\":" + q(KID)
            + ",\"n\":" + q(b64uint(pub.getModulus())) + ",\"e\":" + q(b64uint(pub.getPublicExponent())) + "}]}";
    }

    String token(String clientId, String scope, long now, long exp) throws Exception {
        String header = "{\"alg\":\"RS256\",\"typ\":\"JWT\",\"kid\":" + q(KID) + "}";
        String claims = "{\"iss\":" + q(issuer) + ",\"sub\":" + q(clientId) + ",\"aud\":" + q(audience)
            + ",\"iat\":" + now + ",\"exp\":" + exp + ",\"scope\":" + q(scope) + "}";
        String input = b64json(header) + "." + b64json(claims);
        Signature rs256 = Signature.getInstance("SHA256withRSA");
        rs256.initSign(signing.getPrivate());
        rs256.update(input.getBytes(StandardCharsets.US_ASCII));
        return input + "." + B64URL.encodeToString(rs256.sign());
    }

    static Map<String, String> form(String body) {
        Map<String, String> out = new HashMap<>();
        for (String pair : body.split("&")) {
            if (pair.isEmpty())
                continue;
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            out.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return out;
    }

    static void answer(HttpExchange ex, int status, String json) throws IOException {
        byte[] data = json.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        ex.sendResponseHeaders(status, data.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(data);
        }
    }

    void handleToken(HttpExchange ex) throws IOException {
        if (!"POST".equals(ex.getRequestMethod())) {
            answer(ex, 405, "{\"error\":\"invalid_request\"}");
            return;
        }
        Map<String, String> f = form(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
        String id = f.getOrDefault("client_id", "");
        String secret = f.getOrDefault("client_secret", "");
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth != null && auth.startsWith("Basic ")) {
            String decoded;
            try {
                decoded = new String(Base64.getDecoder().decode(auth.substring(6).trim()), StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                decoded = "";
            }
            int colon = decoded.indexOf(':');
            id = colon < 0 ? "" : URLDecoder.decode(decoded.substring(0, colon), StandardCharsets.UTF_8);
            secret = colon < 0 ? "" : URLDecoder.decode(decoded.substring(colon + 1), StandardCharsets.UTF_8);
        }
        if (!"client_credentials".equals(f.get("grant_type"))) {
            note("refused client=" + id + " reason=unsupported_grant_type");
            answer(ex, 400, "{\"error\":\"unsupported_grant_type\"}");
            return;
        }
        String[] client = clients.get(id);
        if (client == null || !client[0].equals(secret)) {
            note("refused client=" + id + " reason=invalid_client");
            answer(ex, 401, "{\"error\":\"invalid_client\",\"error_description\":\"client authentication failed\"}");
            return;
        }
        long now = System.currentTimeMillis() / 1000;
        long lifetime = Long.parseLong(client[1]);
        String scope = f.getOrDefault("scope", "kafka");
        String jwt;
        try {
            jwt = token(id, scope, now, now + lifetime);
        } catch (Exception e) {
            answer(ex, 500, "{\"error\":\"server_error\"}");
            return;
        }
        note("token client=" + id + " exp=" + (now + lifetime));
        answer(ex, 200, "{\"access_token\":" + q(jwt) + ",\"token_type\":\"Bearer\",\"expires_in\":"
               + lifetime + ",\"scope\":" + q(scope) + "}");
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new HashMap<>();
        List<String> clientSpecs = new ArrayList<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--client"))
                clientSpecs.add(args[i + 1]);
            else
                opt.put(args[i], args[i + 1]);
        }
        for (String required : new String[] {"--port", "--keystore", "--password", "--issuer", "--audience"})
            if (!opt.containsKey(required)) {
                System.err.println("usage: java Issuer.java --port N --keystore P12 --password PW "
                                   + "--issuer URL --audience AUD [--log FILE] --client ID:SECRET:LIFETIME...");
                System.exit(2);
            }
        PrintWriter log = opt.containsKey("--log")
            ? new PrintWriter(new FileWriter(opt.get("--log"), StandardCharsets.UTF_8, true))
            : new PrintWriter(System.err);
        Issuer is = new Issuer(opt.get("--issuer"), opt.get("--audience"), clientSpecs, log);

        char[] pw = opt.get("--password").toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(opt.get("--keystore"))) {
            ks.load(in, pw);
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);

        HttpsServer server = HttpsServer.create(
            new InetSocketAddress("127.0.0.1", Integer.parseInt(opt.get("--port"))), 16);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/token", is::handleToken);
        server.createContext("/jwks", ex -> {
            is.note("jwks");
            answer(ex, 200, is.jwks());
        });
        server.createContext("/.well-known/openid-configuration", ex -> answer(ex, 200,
            "{\"issuer\":" + q(is.issuer) + ",\"token_endpoint\":" + q(is.issuer + "/token")
            + ",\"jwks_uri\":" + q(is.issuer + "/jwks") + ",\"grant_types_supported\":[\"client_credentials\"]"
            + ",\"id_token_signing_alg_values_supported\":[\"RS256\"]}"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.stop(0)));
        server.start();
    }
}
