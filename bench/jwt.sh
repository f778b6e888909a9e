# Sourced by the bench scripts: a throwaway RS256 key pair and tokens signed with it, so the
# service under test can be started with MP_JWT_VERIFY_PUBLICKEY_LOCATION=$TMP/pub.pem.
# Needs TMP (a private scratch directory) and openssl.

b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }

# new_key_pair: writes $TMP/key.pem (private) and $TMP/pub.pem (public).
new_key_pair() {
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/key.pem" 2>/dev/null
    openssl pkey -in "$TMP/key.pem" -pubout -out "$TMP/pub.pem"
}

# make_jwt PAYLOAD-JSON: prints the token signed with $TMP/key.pem.
make_jwt() {
    local h p s
    h=$(printf '%s' '{"alg":"RS256","typ":"JWT"}' | b64url)
    p=$(printf '%s' "$1" | b64url)
    s=$(printf '%s' "$h.$p" | openssl dgst -sha256 -sign "$TMP/key.pem" | b64url)
    printf '%s.%s.%s' "$h" "$p" "$s"
}
