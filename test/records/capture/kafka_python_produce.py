# Produces the fixture message set with kafka-python, used by capture-fixtures.ts:
#   python kafka_python_produce.py BOOTSTRAP TOPIC CODEC BIGVALUE_FILE
import sys
from kafka import KafkaProducer

boot, topic, codec, big_file = sys.argv[1:5]
big = open(big_file, 'rb').read()
p = KafkaProducer(bootstrap_servers=boot, compression_type=None if codec == 'none' else codec,
                  linger_ms=200, batch_size=1000000, max_request_size=2000000)
p.send(topic, key=b'k1', value=b'hello', headers=[('h1', b'v1')], partition=0)
p.send(topic, key=None, value=b'no-key', partition=0)
p.send(topic, key=b'big', value=big, partition=0)
p.send(topic, key=b'k4', value=None, partition=0).get(timeout=30)
p.close()
