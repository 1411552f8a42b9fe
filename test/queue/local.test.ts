import { describeJobQueueConformance } from "./conformance.js";
import { localFixture, sqliteDatabase } from "./local-fixture.js";

describeJobQueueConformance("local (SQLite store, EventHub)", async () => localFixture(await sqliteDatabase()));
