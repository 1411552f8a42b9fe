/**
 * The API's response and request shapes, from the same TypeBox schemas the
 * server validates with (src/api/schemas), imported as types only: nothing of
 * the server is bundled, and the console cannot drift from the API.
 */
import type { Static } from "@sinclair/typebox";
import type { PageInfoSchema } from "../../../src/api/schemas/common.js";

export type { UserView, ApiKeyView, IssuedApiKeyView } from "../../../src/api/schemas/accounts.js";
export type { SessionView, SignInLinkView, CreateSessionBody } from "../../../src/api/schemas/sessions.js";
export type { SourceView, EventSummaryView, ComponentView } from "../../../src/api/schemas/sources.js";

export type PageInfo = Static<typeof PageInfoSchema>;

/** `{page_info, data}`: every list the API answers (PageSchema). */
export interface Page<T> {
  page_info: PageInfo;
  data: T[];
}

/** The paging parameters every list takes (PageQuerySchema). */
export interface PageParams {
  limit?: number;
  before?: string;
  after?: string;
}

export type AppView = Static<typeof import("../../../src/api/schemas/apps.js").AppSchema>;
export type AccountView = Static<typeof import("../../../src/api/schemas/apps.js").AccountSchema>;
export type OAuthStartView = Static<typeof import("../../../src/api/schemas/apps.js").OAuthStartAnswerSchema>;
