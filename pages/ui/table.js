// The dashboard's table of our own (pages/ui/table.py draws it through st.components.v2): the
// experiment page's results grid. Python sends every cell's text and colour ready to show;
// this file only draws them and reports a row opened. Text goes in through textContent, never
// as HTML.
const ROW = "tr[data-item]";

function open(row, setTriggerValue) {
  const table = row.closest("table");
  for (const other of table.querySelectorAll("tr.open")) {
    other.classList.remove("open");
    other.removeAttribute("aria-selected");
  }
  row.classList.add("open");
  row.setAttribute("aria-selected", "true");
  setTriggerValue("open", row.dataset.item);
}

function head(columns) {
  const thead = document.createElement("thead");
  const tr = document.createElement("tr");
  for (const column of columns) {
    const th = document.createElement("th");
    th.textContent = column.label;
    th.className = column.kind;
    if (column.help) th.title = column.help;
    tr.appendChild(th);
  }
  thead.appendChild(tr);
  return thead;
}

function body(columns, rows, selected) {
  const tbody = document.createElement("tbody");
  for (const row of rows) {
    const tr = document.createElement("tr");
    tr.dataset.item = row.item;
    tr.tabIndex = 0;
    if (row.item === selected) {
      tr.classList.add("open");
      tr.setAttribute("aria-selected", "true");
    }
    row.cells.forEach((cell, n) => {
      const td = document.createElement("td");
      td.className = columns[n].kind;
      td.textContent = cell.text;
      if (cell.colour) {
        td.style.backgroundColor = cell.colour;
        td.classList.add("coloured");
      }
      if (cell.failed) td.classList.add("failed");
      if (columns[n].kind === "text" && cell.text) td.title = cell.text;
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }
  return tbody;
}

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let box = parentElement.querySelector("div.grid");
  if (!box) {
    box = document.createElement("div");
    box.className = "grid";
    box.appendChild(document.createElement("table"));
    box.addEventListener("click", (event) => {
      const row = event.target.closest(ROW);
      if (row) open(row, setTriggerValue);
    });
    box.addEventListener("keydown", (event) => {
      const row = event.target.closest(ROW);
      if (!row) return;
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        open(row, setTriggerValue);
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        const next = event.key === "ArrowDown" ? row.nextElementSibling : row.previousElementSibling;
        if (next) next.focus();
      }
    });
    parentElement.appendChild(box);
  }
  box.style.height = `${data.height}px`;
  const { columns, rows, selected } = data;
  box.querySelector("table").replaceChildren(head(columns), body(columns, rows, selected));
  if (box.dataset.page !== data.page) {
    // Back to the top for another page; not on the first draw, where it is there already and
    // setting it would lay the table out there and then.
    if (box.dataset.page !== undefined) box.scrollTop = 0;
    box.dataset.page = data.page;
  }
}
