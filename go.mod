module github.com/fb46ecde/records

go 1.26
