import { describeJobQueueConformance } from "./conformance.js";
import { localFixture } from "./local-fixture.js";

describeJobQueueConformance("local (SQLite store, EventHub)", localFixture);
