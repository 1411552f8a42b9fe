// RSS 2.0, RSS 1.0 (RDF) and Atom feeds read into one item shape, with fast-xml-parser.
import { XMLParser, XMLValidator } from "fast-xml-parser";

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  removeNSPrefix: true, // rdf:RDF, dc:date, content:encoded → RDF, date, encoded
  parseTagValue: false, // a title of "2024" stays text
  trimValues: true,
  isArray: (name) => ["item", "entry", "link", "category", "author"].includes(name),
});

/** The text of an element however the parser gave it: a string, { "#text" }, or a list of those. */
function text(value) {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return text(value[0]);
  if (typeof value === "object") return value["#text"] !== undefined ? String(value["#text"]) : undefined;
  const result = String(value);
  return result === "" ? undefined : result;
}

function isoDate(value) {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? raw : new Date(ms).toISOString();
}

/** Atom: the alternate link (or the first); RSS: the link's text. */
function linkOf(links) {
  if (!Array.isArray(links)) return text(links);
  const alternate = links.find((link) => typeof link === "object" && link["@_href"] && (link["@_rel"] ?? "alternate") === "alternate");
  const chosen = alternate ?? links[0];
  return typeof chosen === "object" && chosen !== null && chosen["@_href"] ? String(chosen["@_href"]) : text(chosen);
}

function authorOf(item) {
  const author = item.author ?? item.creator;
  if (Array.isArray(author)) return authorOf({ author: author[0] });
  if (author && typeof author === "object" && author.name !== undefined) return text(author.name);
  return text(author);
}

function categoriesOf(item) {
  const list = Array.isArray(item.category) ? item.category : item.subject !== undefined ? [item.subject] : [];
  return list.map((category) => (typeof category === "object" && category !== null && category["@_term"] ? String(category["@_term"]) : text(category))).filter(Boolean);
}

function normalize(item, format) {
  const guid = text(item.guid) ?? text(item.id) ?? (item["@_about"] ? String(item["@_about"]) : undefined);
  const link = linkOf(item.link);
  const title = text(item.title);
  const published = isoDate(item.pubDate ?? item.published ?? item.date ?? item.issued ?? item.updated);
  return {
    // What dedupe compares: the guid (or Atom id, or RDF about), else the link, else the title with the date.
    key: guid ?? link ?? (title !== undefined ? `${title}|${published ?? ""}` : undefined),
    guid,
    title,
    link,
    published,
    updated: isoDate(item.updated ?? item.modified),
    author: authorOf(item),
    summary: text(item.description ?? item.summary),
    content: text(item.encoded ?? item.content),
    categories: categoriesOf(item),
    format,
  };
}

/**
 * Parses a feed's text. Throws an Error whose message says what is wrong (not XML, at
 * which line; or XML that is not a feed), for the one log line a bad feed gets.
 */
export function parseFeed(xml) {
  if (typeof xml !== "string" || xml.trim() === "") throw new Error("the answer is empty");
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`it is not well-formed XML: ${String(valid.err.msg).replace(/\.$/, "")} (line ${valid.err.line}, column ${valid.err.col})`);
  const document = parser.parse(xml);
  if (document.rss) {
    const channel = document.rss.channel ?? {};
    return { format: "rss", title: text(channel.title), link: linkOf(channel.link), items: (channel.item ?? []).map((item) => normalize(item, "rss")) };
  }
  if (document.RDF) {
    const channel = document.RDF.channel ?? {};
    const items = document.RDF.item ?? channel.item ?? [];
    return { format: "rdf", title: text(channel.title), link: linkOf(channel.link), items: items.map((item) => normalize(item, "rdf")) };
  }
  if (document.feed) {
    return { format: "atom", title: text(document.feed.title), link: linkOf(document.feed.link), items: (document.feed.entry ?? []).map((entry) => normalize(entry, "atom")) };
  }
  const root = Object.keys(document).find((name) => !name.startsWith("?") && !name.startsWith("#"));
  throw new Error(`it is XML but not an RSS or Atom feed (its root element is <${root ?? "nothing"}>)`);
}
