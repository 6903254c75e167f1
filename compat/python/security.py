"""The security rows (compat/security/rows.js) for the Python programs: the transports, each client's settings for
them from the FJORD_SEC_* variables. Users: admin, alice, bob, each with password NAME-secret."""
import base64
import json
import os
import time

from kafka.sasl.oauth import AbstractTokenProvider

# secure-produce-consume's transports: SSL, mutual TLS, then each SASL mechanism over SASL_SSL.
TRANSPORTS = ["SSL", "MTLS", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
RECORDS = 20


def env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set (the security rows run under compat/run.js)")
    return value


def endpoint(transport, tls=True):
    """The broker endpoint of a transport; SASL mechanisms over SASL_SSL, or SASL_PLAINTEXT if not tls."""
    if transport in ("SSL", "MTLS"):
        return env(f"FJORD_SEC_{transport}")
    return env("FJORD_SEC_SASL_SSL" if tls else "FJORD_SEC_SASL_PLAINTEXT")


def sent_values(transport):
    return [f"{transport} record {i} \u00e9".encode() for i in range(RECORDS)]


def librdkafka_config(transport, user, tls=True):
    """confluent-kafka's settings for a transport as user."""
    config = {"ssl.ca.location": env("FJORD_SEC_CA")} if tls else {}
    if transport in ("SSL", "MTLS"):
        config["security.protocol"] = "ssl"
    else:
        config["security.protocol"] = "sasl_ssl" if tls else "sasl_plaintext"
    if transport == "MTLS":
        config.update({"ssl.certificate.location": env("FJORD_SEC_CLIENT_CERT"), "ssl.key.location": env("FJORD_SEC_CLIENT_KEY")})
    elif transport == "OAUTHBEARER":
        config.update({"sasl.mechanisms": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True, "sasl.oauthbearer.config": f"principal={user}"})
    elif transport != "SSL":
        config.update({"sasl.mechanisms": transport, "sasl.username": user, "sasl.password": f"{user}-secret"})
    return config


def unsecured_jws(sub):
    """An unsecured JWS (alg none) as Kafka's OAuthBearerUnsecuredLoginCallbackHandler makes: sub, iat, exp."""
    b64 = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()  # noqa: E731
    now = int(time.time())
    return f"{b64({'alg': 'none'})}.{b64({'sub': sub, 'iat': now, 'exp': now + 3600})}."


class UnsecuredTokenProvider(AbstractTokenProvider):
    """kafka-python's OAUTHBEARER token provider: an unsecured JWS for the user."""

    def __init__(self, user):
        super().__init__()
        self.user = user

    def token(self):
        return unsecured_jws(self.user)


def kafka_python_config(transport, user, tls=True):
    """kafka-python's settings for a transport as user."""
    config = {"ssl_cafile": env("FJORD_SEC_CA")} if tls else {}
    if transport in ("SSL", "MTLS"):
        config["security_protocol"] = "SSL"
    else:
        config["security_protocol"] = "SASL_SSL" if tls else "SASL_PLAINTEXT"
    if transport == "MTLS":
        config.update({"ssl_certfile": env("FJORD_SEC_CLIENT_CERT"), "ssl_keyfile": env("FJORD_SEC_CLIENT_KEY")})
    elif transport == "OAUTHBEARER":
        config.update({"sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": UnsecuredTokenProvider(user)})
    elif transport != "SSL":
        config.update({"sasl_mechanism": transport, "sasl_plain_username": user, "sasl_plain_password": f"{user}-secret"})
    return config
