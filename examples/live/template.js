// Shared by the example templates: CasparCG template data as an object. CasparCG clients
// send XML (<templateData><componentData id="f0"><data id="text" value="..."/>...), SPX and
// casparcg-connection a JSON string, pagereel's HTTP control an object: all three arrive
// here the same way.
window.templateData = function (data) {
  if (data && typeof data === "object") return data;
  if (typeof data !== "string" || data.trim() === "") return {};
  const text = data.trim();
  if (text[0] === "{") {
    try { return JSON.parse(text); } catch (e) { return {}; }
  }
  const xml = new DOMParser().parseFromString(text, "application/xml");
  const fields = {};
  for (const component of xml.querySelectorAll("componentData")) {
    const value = component.querySelector("data");
    if (value) fields[component.getAttribute("id")] = value.getAttribute("value");
  }
  return fields;
};
