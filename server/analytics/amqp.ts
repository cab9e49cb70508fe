/**
 * AMQP output of the pipeline (spec "AMQP output"; docs/pipeline.md#amqp) with amqplib.
 *
 * Each emitted frame output is published as one message: body the output JSON (UTF-8), content
 * type application/json, persistent, message id `<sourceId>-<frameId>`, timestamp the frame's
 * time (seconds), headers sourceId, frameId and eventCount; to `amqpExchange` with
 * `amqpRoutingKey` (an empty exchange is AMQP's default exchange, which routes to the queue named
 * by the routing key). A named exchange is used as it is when it exists, else declared as a
 * durable topic exchange. Publishing uses a confirm channel: a message counts as published when
 * the broker confirmed it.
 *
 * Connection: amqp(s)://amqpHost:amqpPort (0: 5672, 5671 with amqpUseSsl) as amqpUser/amqpPassword
 * (guest/guest when empty). A lost connection is reopened on the next message; a message is tried
 * amqpMaxRetries more times (backoff 0.2 s, doubling up to 5 s). When all tries fail the message is
 * dropped and logged, or, with amqpErrorOnFailure, the pipeline stops with the error. The password
 * is never logged.
 */
import amqp, { type ChannelModel, type ConfirmChannel } from "amqplib";
import { ObscuraError } from "@/lib/errors";
import { log } from "../log";
import type { PipelineConfig } from "./config";

export class AmqpOutput {
  private conn: ChannelModel | null = null;
  private channel: ConfirmChannel | null = null;
  published = 0;
  failed = 0;
  private readonly where: string;

  constructor(private readonly c: PipelineConfig) {
    this.where = `amqp${c.amqpUseSsl ? "s" : ""}://${c.amqpHost}:${this.port()}`;
  }

  private port(): number {
    return this.c.amqpPort || (this.c.amqpUseSsl ? 5671 : 5672);
  }

  /** Opens the connection (the pipeline refuses to start when the broker cannot be reached and amqpErrorOnFailure is set). */
  async connect(): Promise<void> {
    try {
      await this.open();
    } catch (e) {
      if (this.c.amqpErrorOnFailure) throw new ObscuraError("UNAVAILABLE", `AMQP output ${this.where}: cannot connect: ${(e as Error).message}`);
      log.warn("amqp output not connected; will retry on the next message", { broker: this.where, error: (e as Error).message });
    }
  }

  private async open(): Promise<ConfirmChannel> {
    if (this.channel) return this.channel;
    const conn = await amqp.connect(
      { protocol: this.c.amqpUseSsl ? "amqps" : "amqp", hostname: this.c.amqpHost, port: this.port(), username: this.c.amqpUser || "guest", password: this.c.amqpPassword || "guest", heartbeat: 30 },
      { timeout: 5000 },
    );
    conn.on("error", (e: Error) => log.warn("amqp connection error", { broker: this.where, error: e.message }));
    conn.on("close", () => {
      if (this.conn === conn) {
        this.conn = null;
        this.channel = null;
      }
    });
    const channel = async () => {
      const ch = await conn.createConfirmChannel();
      ch.on("error", (e: Error) => log.warn("amqp channel error", { broker: this.where, error: e.message }));
      return ch;
    };
    let ch = await channel();
    if (this.c.amqpExchange) {
      // an existing exchange is used as it is (its type is the operator's); a missing one is declared
      // (the failed check closes its channel, so the declaration takes a new one)
      try {
        await ch.checkExchange(this.c.amqpExchange);
      } catch {
        ch = await channel();
        await ch.assertExchange(this.c.amqpExchange, "topic", { durable: true });
      }
    }
    ch.on("close", () => {
      if (this.channel === ch) this.channel = null;
    });
    this.conn = conn;
    this.channel = ch;
    return ch;
  }

  async publish(data: { sourceId: string; frameId: string; frameTimestamp: number; sensorEvents?: unknown[] }): Promise<void> {
    const body = Buffer.from(JSON.stringify(data));
    let delay = 200;
    let lastError = "";
    for (let attempt = 0; attempt <= this.c.amqpMaxRetries; attempt++) {
      try {
        const ch = await this.open();
        await new Promise<void>((resolve, reject) => {
          ch.publish(
            this.c.amqpExchange,
            this.c.amqpRoutingKey,
            body,
            {
              contentType: "application/json",
              persistent: true,
              messageId: `${data.sourceId}-${data.frameId}`,
              timestamp: Math.floor(data.frameTimestamp / 1000),
              headers: { sourceId: data.sourceId, frameId: data.frameId, eventCount: data.sensorEvents?.length ?? 0 },
            },
            (err) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
          );
        });
        this.published++;
        return;
      } catch (e) {
        lastError = (e as Error).message;
        this.channel = null;
        await this.conn?.close().catch(() => {});
        this.conn = null;
        if (attempt < this.c.amqpMaxRetries) {
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(5000, delay * 2);
        }
      }
    }
    this.failed++;
    const msg = `AMQP output ${this.where}: frame ${data.frameId} not delivered after ${this.c.amqpMaxRetries + 1} tries: ${lastError}`;
    if (this.c.amqpErrorOnFailure) throw new ObscuraError("UNAVAILABLE", msg);
    log.warn("amqp message dropped", { broker: this.where, frame: data.frameId, error: lastError });
  }

  async close(): Promise<void> {
    const conn = this.conn;
    this.conn = null;
    this.channel = null;
    await conn?.close().catch(() => {});
  }
}
