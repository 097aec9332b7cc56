// A live grouped list: tasks in sections by status, sorted by priority.
// `tasks` is a ydbview::FlatMappingsModel; another thread changes the
// database, and the list animates each insertion, removal and move.
import QtQuick

Window {
    id: window
    required property var tasks
    property int commits: 0  // set from C++ after each catch-up
    property bool animate: true  // off for a screenshot: no row caught half-faded
    width: 420; height: 560
    visible: true
    color: "#f6f6f4"
    title: "ydbview: a live list"

    Rectangle {
        id: header
        width: parent.width; height: 44
        color: "#2d4a6b"
        Text {
            anchors.verticalCenter: parent.verticalCenter; x: 14
            color: "white"; font.pixelSize: 17; font.bold: true
            text: "Tasks"
        }
        Text {
            anchors.verticalCenter: parent.verticalCenter; anchors.right: parent.right; anchors.rightMargin: 14
            color: "#c9d6e6"; font.pixelSize: 13
            text: window.tasks.rowCount() >= 0 ? list.count + " rows · " + window.commits + " commits" : ""
        }
    }

    ListView {
        id: list
        anchors { top: header.bottom; left: parent.left; right: parent.right; bottom: parent.bottom }
        clip: true
        model: window.tasks
        section.property: "group"
        section.delegate: Rectangle {
            required property string section
            width: ListView.view.width; height: 28
            color: "#e3e7ec"
            Text { x: 14; anchors.verticalCenter: parent.verticalCenter; text: section.toUpperCase()
                   font.pixelSize: 12; font.bold: true; color: "#41556d" }
        }
        delegate: Rectangle {
            required property string key
            required property string display
            required property string objectText
            width: ListView.view.width; height: 36
            color: "white"
            Rectangle { width: parent.width; height: 1; color: "#ececec"; anchors.bottom: parent.bottom }
            Rectangle {  // the priority, 1 to 5
                x: 14; anchors.verticalCenter: parent.verticalCenter
                width: 18; height: 18; radius: 9
                color: ["#d9534f", "#f0ad4e", "#5bc0de", "#5cb85c", "#aaaaaa"][Math.max(0, Math.min(4, parseInt(objectText.split("|")[1]) - 1))]
            }
            Text { x: 44; anchors.verticalCenter: parent.verticalCenter; text: display; font.pixelSize: 14 }
            Text { anchors.right: parent.right; anchors.rightMargin: 14; anchors.verticalCenter: parent.verticalCenter
                   text: key; color: "#999999"; font.pixelSize: 11 }
        }
        add: Transition { enabled: window.animate; NumberAnimation { property: "opacity"; from: 0; to: 1; duration: 250 } }
        displaced: Transition { enabled: window.animate; NumberAnimation { properties: "y"; duration: 250 } }
        move: Transition { enabled: window.animate; NumberAnimation { properties: "y"; duration: 250 } }
    }
}
