/*
 * TxnProducer.java — a transactional producer made of Kafka's own Java
 * client, for test/kafka-real/r03-transactions.t (kcat cannot produce in
 * transactions).  Compiled by the test with javac against the pinned jars.
 *
 * Usage: java TxnProducer BOOTSTRAP TOPIC TRANSACTIONAL_ID FILE
 * FILE, one command per line: "BEGIN", "COMMIT", "ABORT", or
 * "PARTITION<TAB>KEY<TAB>VALUE" (a message sent in the open transaction).
 * Prints "committed N, aborted M" (transactions) at the end.
 */
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TxnProducer
{
	public static void main(String[] args) throws Exception
	{
		Properties props = new Properties();
		props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
		props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, args[2]);
		props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
		props.put(ProducerConfig.ACKS_CONFIG, "all");
		props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
		props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
		List<String> lines = Files.readAllLines(Paths.get(args[3]), StandardCharsets.UTF_8);
		int committed = 0, aborted = 0;

		try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props))
		{
			producer.initTransactions();
			for (String line : lines)
			{
				if (line.equals("BEGIN"))
					producer.beginTransaction();
				else if (line.equals("COMMIT"))
				{
					producer.commitTransaction();
					committed++;
				}
				else if (line.equals("ABORT"))
				{
					producer.flush();
					producer.abortTransaction();
					aborted++;
				}
				else
				{
					String[] f = line.split("\t", 3);
					producer.send(new ProducerRecord<>(args[1], Integer.parseInt(f[0]),
							f[1].getBytes(StandardCharsets.UTF_8),
							f[2].getBytes(StandardCharsets.UTF_8)));
				}
			}
		}
		System.out.println("committed " + committed + ", aborted " + aborted);
	}
}
